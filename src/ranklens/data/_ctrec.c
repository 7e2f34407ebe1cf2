/* The compiled pass over the text of a 6-column TREC run (issue 12): one scan of the bytes of a block
 * that tokenizes every line into the query id, the document id and the score, as Arrow-layout buffers.
 *
 * This is an accelerator, not a second parser with its own rules: it accepts only the lines whose reading
 * is beyond doubt (fields separated by runs of space, tab, VT or FF, a CR only just before the LF; blank lines and lines whose first
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

#include "_trec_lex.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#if defined(MADV_DONTNEED)
#define HAVE_RELEASE 1
#endif
#endif

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

/* The pass itself over data[0, end) (size: the readable length, >= end). release: data is a read-only
 * mapping of a file (tokenize_mapped): the pages behind the scan are given back (madvise MADV_DONTNEED:
 * a file's pages fault in again, unchanged, if read again), a line holding a NUL byte is declined (the
 * caller's check_text names it) and *nonascii says whether any byte >= 0x80 was seen (the caller then
 * checks the UTF-8). */
static PyObject *tokenize(const char *data, Py_ssize_t size, Py_ssize_t end, int release, int *nonascii);

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
    int nonascii = 0;
    return tokenize(data, size, end, 0, &nonascii);
}

/* tokenize_mapped(address, size, end) -> (tokenize_run's tuple, nonascii) | int: the same pass over the
 * size bytes at address (a read-only mmap of a whole regular file, kept alive by the caller), releasing
 * the pages behind it; see tokenize above. */
static PyObject *tokenize_mapped(PyObject *self, PyObject *args) {
    PyObject *addr;
    Py_ssize_t size, end;
    (void)self;
    if (!PyArg_ParseTuple(args, "Onn", &addr, &size, &end)) return NULL;
    const char *data = (const char *)PyLong_AsVoidPtr(addr);
    if (data == NULL && PyErr_Occurred()) return NULL;
    if (data == NULL || size < 0 || end < 0 || end > size) {
        PyErr_SetString(PyExc_ValueError, "end outside the data");
        return NULL;
    }
    int nonascii = 0;
    PyObject *out = tokenize(data, size, end, 1, &nonascii);
    if (out == NULL || PyLong_Check(out)) return out;
    return Py_BuildValue("(NO)", out, nonascii ? Py_True : Py_False);
}

#ifdef HAVE_RELEASE
static Py_ssize_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (Py_ssize_t)p : 4096;
}
#endif

/* give back the pages of data wholly before upto (from *released on); *released stays page-aligned */
static void release_behind(const char *data, Py_ssize_t upto, Py_ssize_t *released) {
#ifdef HAVE_RELEASE
    static Py_ssize_t page = 0;
    if (page == 0) page = page_size();
    uintptr_t base = (uintptr_t)data, lo = (base + (uintptr_t)*released) & ~(uintptr_t)(page - 1);
    uintptr_t hi = (base + (uintptr_t)upto) & ~(uintptr_t)(page - 1);
    if (hi > lo) madvise((void *)lo, (size_t)(hi - lo), MADV_DONTNEED);
    if (hi > base) *released = (Py_ssize_t)(hi - base);
#else
    (void)data, (void)upto, (void)released;
#endif
}

#define RELEASE_STEP ((Py_ssize_t)8 << 20) /* bytes scanned between two releases */

static PyObject *tokenize(const char *data, Py_ssize_t size, Py_ssize_t end, int release, int *nonascii) {
    if (end > INT32_MAX) return PyLong_FromLong(0); /* int32 offsets: the pure path takes it */

    /* a first guess of the rows: lines of ~40 bytes; buffers grow as needed */
    Py_ssize_t guess = end / 32 + 16;
    Buf qo = {0}, qd = {0}, dof = {0}, dd = {0}, sc = {0}, ln = {0}, dh = {0};
    if (buf_init(&qo, (guess + 1) * 4) < 0 || buf_init(&qd, guess * 4) < 0 || buf_init(&dof, (guess + 1) * 4) < 0 ||
        buf_init(&dd, guess * 12) < 0 || buf_init(&sc, guess * 8) < 0 || buf_init(&dh, guess * 8) < 0)
        goto fail;

    const unsigned char *u = (const unsigned char *)data;
    Py_ssize_t pos = 0, rows = 0, extra = 0, released = 0;
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
        int more; /* a 7th field or later */
        Py_ssize_t line_start = pos;
        int fields = line_fields(u, &pos, end, size, starts, lens, 6, &more);
        if (fields < 0) goto decline; /* a CR that ends no line */
        if (release) {
            Py_ssize_t n = pos - line_start;
            if (memchr(data + line_start, 0, (size_t)n) != NULL) goto decline;
            if (!*nonascii) { /* any byte with its high bit set, 8 bytes at a time */
                uint64_t acc = 0, w;
                Py_ssize_t i = line_start;
                for (; i + 8 <= pos; i += 8) {
                    memcpy(&w, u + i, 8);
                    acc |= w;
                }
                for (; i < pos; i++) acc |= u[i];
                if (acc & UINT64_C(0x8080808080808080)) *nonascii = 1;
            }
            if (pos - released >= RELEASE_STEP) release_behind(data, pos, &released);
        }
        if (fields == 0 || data[starts[0]] == '#') {
            /* line numbers are kept only once a line is skipped: until then row i is line i + 1 */
            if (ln.obj == NULL) {
                if (buf_init(&ln, (guess > rows ? guess : rows + 16) * 8) < 0) goto fail;
                for (int64_t i = 1; i <= (int64_t)rows; i++) memcpy(ln.p + (i - 1) * 8, &i, 8);
                ln.len = rows * 8;
            }
            continue;
        }
        if (fields < 6) goto decline;
        double score;
        if (parse_score(data + starts[4], lens[4], &score) < 0) goto decline;
        if (more) extra++;
        if (buf_reserve(&qd, lens[0]) < 0 || buf_reserve(&dd, lens[2]) < 0 || buf_reserve(&qo, 4) < 0 ||
            buf_reserve(&dof, 4) < 0 || buf_reserve(&sc, 8) < 0 || buf_reserve(&dh, 8) < 0 ||
            (ln.obj != NULL && buf_reserve(&ln, 8) < 0))
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
        if (ln.obj != NULL) {
            memcpy(ln.p + ln.len, &lineno, 8);
            ln.len += 8;
        }
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
        buf_finish(&sc) < 0 || (ln.obj != NULL && buf_finish(&ln) < 0) || buf_finish(&dh) < 0)
        goto fail;
    if (release) release_behind(data, size, &released);
    PyObject *lines;
    if (ln.obj == NULL) { /* no line skipped: every line a row, line i is row i (the pure readers say None too) */
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
    if (release) release_behind(data, size, &released);
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
    {"tokenize_mapped", tokenize_mapped, METH_VARARGS,
     "tokenize_mapped(address, size, end) -> (tokenize_run's tuple, nonascii), or the line to leave to the pure "
     "reader; the pages of the read-only mapping at address are released behind the scan"},
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
