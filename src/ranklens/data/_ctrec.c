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
 *     (query_offsets, query_data, doc_offsets, doc_data, scores, lines_or_None, rows, extra, first_tag,
 *      doc_hashes)
 *   | int (the line to hand to the pure reader; 0 when the text is too big for int32 offsets)
 *
 * doc_hashes holds the 64-bit id hash (id_hash below) of every row's document id, computed in the same pass;
 * hash_strings computes the same hash for any Arrow string array (the qrels' ids, a pure-path block), and
 * ranklens.data._hashing has a numpy implementation giving identical values when this module is absent.
 * any_repeat is the hash-set duplicate test of the run's (query, document) keys.
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

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define HAVE_SEP_MASK 1
/* bit i set when byte p[i] (i < 64) is a separator of class 1 (space, or 9..13: tab, LF, VT, FF, CR; the
 * caller passes a line without its LF) */
static inline uint64_t sep_mask64(const unsigned char *p) {
    const __m128i space = _mm_set1_epi8(' '), nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4);
    uint64_t m = 0;
    for (int k = 0; k < 4; k++) {
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i d = _mm_sub_epi8(b, nine);
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(d, four), d); /* 9 <= b <= 13 */
        __m128i sep = _mm_or_si128(_mm_cmpeq_epi8(b, space), ctl);
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(sep) << (16 * k);
    }
    return m;
}
#endif

/* The id hash: 64-bit FNV-1a over the bytes, then the murmur3 finaliser (fmix64) to spread the bits.
 * A hash only ever proposes candidates, every match is confirmed on the exact strings: it needs to be fast
 * and well spread, not cryptographic. Keep in step with ranklens.data._hashing._hash_numpy. */
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static inline uint64_t fmix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb93fe53ec53ULL;
    h ^= h >> 33;
    return h;
}

static inline uint64_t id_hash(const unsigned char *s, Py_ssize_t n) {
    uint64_t h = FNV_OFFSET;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ s[i]) * FNV_PRIME;
    return fmix64(h);
}

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
    Buf qo = {0}, qd = {0}, dof = {0}, dd = {0}, sc = {0}, ln = {0}, dh = {0};
    if (buf_init(&qo, (guess + 1) * 4) < 0 || buf_init(&qd, guess * 4) < 0 || buf_init(&dof, (guess + 1) * 4) < 0 ||
        buf_init(&dd, guess * 12) < 0 || buf_init(&sc, guess * 8) < 0 || buf_init(&ln, guess * 8) < 0 ||
        buf_init(&dh, guess * 8) < 0)
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
#ifdef HAVE_SEP_MASK
        /* a line of at most 64 bytes (all of a usual run's): its fields from a bit mask of its separators,
         * without a branch per byte; the 64 bytes read must lie within the bytes object */
        const unsigned char *nlp = (const unsigned char *)memchr(u + pos, '\n', (size_t)(end - pos));
        Py_ssize_t lend = nlp ? (Py_ssize_t)(nlp - u) : end, llen = lend - pos;
        if (llen <= 64 && pos + 64 <= size) {
            uint64_t valid = llen == 64 ? ~(uint64_t)0 : (((uint64_t)1 << llen) - 1);
            uint64_t tok = ~sep_mask64(u + pos) & valid;
            uint64_t first = tok & ~(tok << 1), last = tok & ~(tok >> 1);
            while (first) {
                if (fields == 6) {
                    more = 1;
                    break;
                }
                int a = __builtin_ctzll(first), b = __builtin_ctzll(last);
                starts[fields] = pos + a;
                lens[fields] = b - a + 1;
                fields++;
                first &= first - 1;
                last &= last - 1;
            }
            pos = lend;
        } else
#endif
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
            buf_reserve(&dof, 4) < 0 || buf_reserve(&sc, 8) < 0 || buf_reserve(&ln, 8) < 0 || buf_reserve(&dh, 8) < 0)
            goto fail;
        uint64_t h = id_hash(u + starts[2], lens[2]);
        memcpy(dh.p + dh.len, &h, 8);
        dh.len += 8;
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
        buf_finish(&sc) < 0 || buf_finish(&ln) < 0 || buf_finish(&dh) < 0)
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
    PyObject *result =
        Py_BuildValue("(NNNNNNnnNN)", qo.obj, qd.obj, dof.obj, dd.obj, sc.obj, lines, rows, extra, tag, dh.obj);
    qo.obj = qd.obj = dof.obj = dd.obj = sc.obj = dh.obj = NULL;
    buf_clear(&ln);
    return result;

decline:
    buf_clear(&qo), buf_clear(&qd), buf_clear(&dof), buf_clear(&dd), buf_clear(&sc), buf_clear(&ln), buf_clear(&dh);
    return PyLong_FromLongLong((long long)lineno);
fail:
    buf_clear(&qo), buf_clear(&qd), buf_clear(&dof), buf_clear(&dd), buf_clear(&sc), buf_clear(&ln), buf_clear(&dh);
    return NULL;
}

/* hash_strings(offsets_address, data_address, data_len, n) -> bytearray of n uint64: id_hash of the
 * strings of an Arrow string array, given the address of its n+1 int32 offsets (already moved to the
 * array's first element) and of its data buffer. The caller (ranklens.data._hashing) keeps both alive;
 * every offset is checked to lie within the data, in order. */
static PyObject *hash_strings(PyObject *self, PyObject *args) {
    PyObject *off_addr, *data_addr;
    Py_ssize_t data_len, n;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOnn", &off_addr, &data_addr, &data_len, &n)) return NULL;
    const int32_t *off = (const int32_t *)PyLong_AsVoidPtr(off_addr);
    if (off == NULL && PyErr_Occurred()) return NULL;
    const unsigned char *data = (const unsigned char *)PyLong_AsVoidPtr(data_addr);
    if (data == NULL && PyErr_Occurred()) return NULL;
    if (n < 0 || data_len < 0 || (n > 0 && off == NULL)) {
        PyErr_SetString(PyExc_ValueError, "bad string array");
        return NULL;
    }
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * 8 > 0 ? n * 8 : 0);
    if (out == NULL) return NULL;
    char *o = PyByteArray_AsString(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t a = off[i], b = off[i + 1];
        if (a < 0 || b < a || (Py_ssize_t)b > data_len || (b > a && data == NULL)) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_ValueError, "string offsets outside the data");
            return NULL;
        }
        uint64_t h = id_hash(data + a, b - a);
        memcpy(o + i * 8, &h, 8);
    }
    return out;
}

/* any_repeat(keys_address, n, bounds_address, nbounds) -> bool: whether some uint64 key occurs twice
 * within one segment [bounds[j], bounds[j+1]) of the n keys (nbounds int64 bounds, the first 0 and the
 * last n; nbounds 0: one segment of all keys). An open-addressing set per segment, sized to the segment,
 * so a query's keys stay in cache. */
static PyObject *any_repeat(PyObject *self, PyObject *args) {
    PyObject *keys_addr, *bounds_addr;
    Py_ssize_t n, nb;
    (void)self;
    if (!PyArg_ParseTuple(args, "OnOn", &keys_addr, &n, &bounds_addr, &nb)) return NULL;
    const uint64_t *keys = (const uint64_t *)PyLong_AsVoidPtr(keys_addr);
    if (keys == NULL && PyErr_Occurred()) return NULL;
    const int64_t *bounds = (const int64_t *)PyLong_AsVoidPtr(bounds_addr);
    if (bounds == NULL && PyErr_Occurred()) return NULL;
    if (n < 0 || nb < 0 || (n > 0 && keys == NULL) || (nb > 0 && bounds == NULL) || nb == 1) {
        PyErr_SetString(PyExc_ValueError, "bad keys");
        return NULL;
    }
    Py_ssize_t segments = nb ? nb - 1 : 1, biggest = 0;
    for (Py_ssize_t j = 0; j < segments; j++) {
        int64_t lo = nb ? bounds[j] : 0, hi = nb ? bounds[j + 1] : n;
        if (lo < 0 || hi < lo || hi > n || (nb && ((j == 0 && lo != 0) || (j == segments - 1 && hi != n)))) {
            PyErr_SetString(PyExc_ValueError, "bounds outside the keys");
            return NULL;
        }
        if (hi - lo > biggest) biggest = (Py_ssize_t)(hi - lo);
    }
    size_t cap = 16;
    while (cap < (size_t)biggest * 2) cap *= 2;
    uint64_t *table = (uint64_t *)PyMem_Malloc(cap * sizeof(uint64_t));
    if (table == NULL) return PyErr_NoMemory();
    int repeat = 0;
    for (Py_ssize_t j = 0; j < segments && !repeat; j++) {
        int64_t lo = nb ? bounds[j] : 0, hi = nb ? bounds[j + 1] : n;
        size_t size = 16;
        while (size < (size_t)(hi - lo) * 2) size *= 2;
        size_t mask = size - 1;
        memset(table, 0, size * sizeof(uint64_t));
        int zero_seen = 0; /* 0 marks an empty slot: the key 0 is tracked apart */
        for (int64_t i = lo; i < hi; i++) {
            uint64_t k = keys[i];
            if (k == 0) {
                if (zero_seen) { repeat = 1; break; }
                zero_seen = 1;
                continue;
            }
            size_t slot = (size_t)(fmix64(k) & mask);
            while (table[slot] != 0 && table[slot] != k) slot = (slot + 1) & mask;
            if (table[slot] == k) { repeat = 1; break; }
            table[slot] = k;
        }
    }
    PyMem_Free(table);
    return PyBool_FromLong(repeat);
}

static PyMethodDef methods[] = {
    {"tokenize_run", tokenize_run, METH_VARARGS,
     "tokenize_run(data, end) -> (query_offsets, query_data, doc_offsets, doc_data, scores, lines, rows, extra, "
     "first_tag, doc_hashes), or the number of the first line to leave to the pure reader"},
    {"hash_strings", hash_strings, METH_VARARGS,
     "hash_strings(offsets_address, data_address, data_len, n) -> bytearray of n uint64 id hashes"},
    {"any_repeat", any_repeat, METH_VARARGS,
     "any_repeat(keys_address, n, bounds_address, nbounds) -> whether a uint64 key repeats within a segment"},
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
