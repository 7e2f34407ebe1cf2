/* The compiled pass over the text of a 6-column TREC run (issue 12): one scan of the bytes of a block
 * that tokenizes every line into the query id, the document id and the score, as Arrow-layout buffers.
 *
 * This is an accelerator, not a second parser with its own rules: it accepts only the lines whose reading
 * is beyond doubt (fields separated by runs of space, tab, CR, VT or FF; blank lines and lines whose first
 * field starts with '#' skipped; words after the tag ignored and counted; a score in a strict decimal or
 * inf/nan grammar) and, for anything else, returns the 1-based number of the first line it did not accept,
 * so that the caller re-reads the block with the pure reader (ranklens.data.readers.trec), which is the
 * reference and the only producer of error messages. Errors are therefore identical by construction.
 *
 * The caller has already checked the text (no NUL, valid UTF-8, byte-order marks dropped) and passes the
 * length without trailing whitespace. Only the stable C API is used; no numpy C API: the outputs are
 * bytearrays that Python wraps with numpy.frombuffer / pyarrow.py_buffer without a copy.
 *
 * tokenize_run(data: bytes, end: int) ->
 *     (query_offsets, query_data, doc_offsets, doc_data, scores, lines_or_None, rows, extra, first_tag)
 *   | int (the line to hand to the pure reader; 0 when the text is too big for int32 offsets)
 */
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* byte classes: 0 a token byte, 1 a separator inside a line, 2 the line break */
static unsigned char CLASS[256];

static void init_class(void) {
    memset(CLASS, 0, sizeof CLASS);
    CLASS[' '] = CLASS['\t'] = CLASS['\r'] = CLASS['\v'] = CLASS['\f'] = 1;
    CLASS['\n'] = 2;
}

typedef struct {
    PyObject *obj; /* a bytearray */
    char *p;
    Py_ssize_t len, cap;
} Buf;

static int buf_init(Buf *b, Py_ssize_t cap) {
    if (cap < 16) cap = 16;
    b->obj = PyByteArray_FromStringAndSize(NULL, cap);
    if (b->obj == NULL) return -1;
    b->p = PyByteArray_AsString(b->obj);
    b->len = 0;
    b->cap = cap;
    return 0;
}

static int buf_reserve(Buf *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap * 2;
    while (cap < b->len + more) cap *= 2;
    if (PyByteArray_Resize(b->obj, cap) < 0) return -1;
    b->p = PyByteArray_AsString(b->obj);
    b->cap = cap;
    return 0;
}

static int buf_finish(Buf *b) {
    if (PyByteArray_Resize(b->obj, b->len) < 0) return -1;
    return 0;
}

static void buf_clear(Buf *b) { Py_CLEAR(b->obj); }

/* exact powers of ten (all exactly representable as doubles up to 1e22) */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int lower_eq(const char *s, Py_ssize_t n, const char *word) {
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return word[n] == '\0';
}

/* The score of a token, or -1 when the token is not in the strict grammar
 *   [+-]? ( digits [ '.' digits? ] | '.' digits ) ( [eE] [+-]? digits )?  |  [+-]? ( inf | infinity | nan )
 * which every reader of the pure path accepts with the same value (Python's float(), correctly rounded).
 * Short plain decimals take the exact fast path (an integer below 2^53 divided by an exact power of ten is
 * one correctly rounded operation); the rest goes through PyOS_string_to_double, which is float() itself. */
static int parse_score(const char *s, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0;
    int negative = 0;
    if (n == 0) return -1;
    if (s[0] == '+' || s[0] == '-') {
        negative = s[0] == '-';
        i = 1;
    }
    if (i < n && !(s[i] >= '0' && s[i] <= '9') && s[i] != '.') {
        Py_ssize_t rest = n - i;
        if (lower_eq(s + i, rest, "inf") || lower_eq(s + i, rest, "infinity")) {
            *out = negative ? -Py_HUGE_VAL : Py_HUGE_VAL;
            return 0;
        }
        return -1; /* nan (sign bits and payloads) is left to the pure path */
    }
    uint64_t mantissa = 0;
    int digits = 0, frac = 0, seen = 0, exact = 1;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen++) {
        if (mantissa == 0 && s[i] == '0') continue; /* leading zeros do not count */
        if (digits < 19) mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
        else exact = 0;
        digits++;
    }
    if (i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen++) {
            if (digits < 19) {
                mantissa = mantissa * 10 + (uint64_t)(s[i] - '0');
                if (mantissa) digits++;
                frac++;
            } else exact = 0;
        }
    }
    if (seen == 0) return -1;
    if (i < n) {
        if (s[i] != 'e' && s[i] != 'E') return -1;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n) return -1;
        for (; i < n; i++)
            if (!(s[i] >= '0' && s[i] <= '9')) return -1;
        exact = 0;
    }
    if (exact && mantissa < ((uint64_t)1 << 53) && frac <= 22) {
        double v = (double)mantissa / POW10[frac];
        *out = negative ? -v : v;
        return 0;
    }
    /* the slow, general path: the token is followed by a separator, a line break or the bytes object's
     * terminating NUL, none of which a number can continue with */
    char *endp = NULL;
    double v = PyOS_string_to_double(s, &endp, NULL);
    if (endp != s + n) {
        PyErr_Clear();
        return -1;
    }
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    *out = v;
    return 0;
}

static PyObject *tokenize_run(PyObject *self, PyObject *args) {
    PyObject *data_obj;
    Py_ssize_t end;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &data_obj, &end)) return NULL;
    char *data;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(data_obj, &data, &size) < 0) return NULL;
    if (end < 0 || end > size) {
        PyErr_SetString(PyExc_ValueError, "end outside the data");
        return NULL;
    }
    if (end > INT32_MAX) return PyLong_FromLong(0); /* int32 offsets: the pure path takes it */

    /* a first guess of the rows: lines of ~40 bytes; buffers grow as needed */
    Py_ssize_t guess = end / 32 + 16;
    Buf qo = {0}, qd = {0}, dof = {0}, dd = {0}, sc = {0}, ln = {0};
    if (buf_init(&qo, (guess + 1) * 4) < 0 || buf_init(&qd, guess * 4) < 0 || buf_init(&dof, (guess + 1) * 4) < 0 ||
        buf_init(&dd, guess * 12) < 0 || buf_init(&sc, guess * 8) < 0 || buf_init(&ln, guess * 8) < 0)
        goto fail;

    const unsigned char *u = (const unsigned char *)data;
    Py_ssize_t pos = 0, rows = 0, extra = 0;
    int64_t lineno = 0;
    const char *tag0 = NULL;
    Py_ssize_t tag0_len = 0;
    int32_t zero = 0;
    memcpy(qo.p, &zero, 4);
    memcpy(dof.p, &zero, 4);
    qo.len = dof.len = 4;

    while (pos < end) {
        lineno++;
        Py_ssize_t starts[6], lens[6];
        int fields = 0;
        int more = 0; /* a 7th field or later */
        for (;;) {
            while (pos < end && CLASS[u[pos]] == 1) pos++;
            if (pos >= end || u[pos] == '\n') break;
            Py_ssize_t start = pos;
            while (pos < end && CLASS[u[pos]] == 0) pos++;
            if (fields < 6) {
                starts[fields] = start;
                lens[fields] = pos - start;
                fields++;
            } else more = 1;
        }
        if (pos < end) pos++; /* the line break */
        if (fields == 0 || data[starts[0]] == '#') continue;
        if (fields < 6) goto decline;
        double score;
        if (parse_score(data + starts[4], lens[4], &score) < 0) goto decline;
        if (more) extra++;
        if (buf_reserve(&qd, lens[0]) < 0 || buf_reserve(&dd, lens[2]) < 0 || buf_reserve(&qo, 4) < 0 ||
            buf_reserve(&dof, 4) < 0 || buf_reserve(&sc, 8) < 0 || buf_reserve(&ln, 8) < 0)
            goto fail;
        memcpy(qd.p + qd.len, data + starts[0], (size_t)lens[0]);
        qd.len += lens[0];
        memcpy(dd.p + dd.len, data + starts[2], (size_t)lens[2]);
        dd.len += lens[2];
        int32_t off = (int32_t)qd.len;
        memcpy(qo.p + qo.len, &off, 4);
        qo.len += 4;
        off = (int32_t)dd.len;
        memcpy(dof.p + dof.len, &off, 4);
        dof.len += 4;
        memcpy(sc.p + sc.len, &score, 8);
        sc.len += 8;
        memcpy(ln.p + ln.len, &lineno, 8);
        ln.len += 8;
        if (tag0 == NULL) {
            tag0 = data + starts[5];
            tag0_len = lens[5];
        }
        rows++;
    }
    if (rows == 0) { /* only comments: the pure path says what that means */
        lineno = 1;
        goto decline;
    }
    if (buf_finish(&qo) < 0 || buf_finish(&qd) < 0 || buf_finish(&dof) < 0 || buf_finish(&dd) < 0 ||
        buf_finish(&sc) < 0 || buf_finish(&ln) < 0)
        goto fail;
    PyObject *lines;
    if (rows == lineno) { /* every line a row: line i is row i (the pure readers say None too) */
        lines = Py_None;
        Py_INCREF(lines);
    } else {
        lines = ln.obj;
        ln.obj = NULL;
    }
    PyObject *tag = PyBytes_FromStringAndSize(tag0, tag0_len);
    if (tag == NULL) {
        Py_DECREF(lines);
        goto fail;
    }
    PyObject *result = Py_BuildValue("(NNNNNNnnN)", qo.obj, qd.obj, dof.obj, dd.obj, sc.obj, lines, rows, extra, tag);
    qo.obj = qd.obj = dof.obj = dd.obj = sc.obj = NULL;
    buf_clear(&ln);
    return result;

decline:
    buf_clear(&qo), buf_clear(&qd), buf_clear(&dof), buf_clear(&dd), buf_clear(&sc), buf_clear(&ln);
    return PyLong_FromLongLong((long long)lineno);
fail:
    buf_clear(&qo), buf_clear(&qd), buf_clear(&dof), buf_clear(&dd), buf_clear(&sc), buf_clear(&ln);
    return NULL;
}

static PyMethodDef methods[] = {
    {"tokenize_run", tokenize_run, METH_VARARGS,
     "tokenize_run(data, end) -> (query_offsets, query_data, doc_offsets, doc_data, scores, lines, rows, extra, "
     "first_tag), or the number of the first line to leave to the pure reader"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ctrec", "Compiled tokenizer of TREC run text (see ranklens.data.readers.trec).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ctrec(void) {
    init_class();
    return PyModule_Create(&module);
}
