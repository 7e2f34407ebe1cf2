/* The express evaluation (issue 12): TREC qrels and one TREC run, as bytes, to the per-query values of the
 * common measures (nDCG, DCG, AP, P, RR and R, each with or without a cutoff, default parameters), in one
 * compiled pass, without numpy or pyarrow. It exists for the collections most people have (S-sized: a
 * few thousand queries), where importing numpy and pyarrow costs more than the evaluation itself.
 *
 * This is an accelerator, not a second engine with its own rules: it takes only inputs whose reading and
 * evaluation are beyond doubt, and for anything else it returns None so that the caller runs the general
 * path (ranklens.evaluation), which is the reference and the only producer of errors and of every note
 * but the two alignment notes counted here. It declines, among others: a qrels line that is not exactly
 * four fields with a decimal label of at most nine digits, a qrels comment, a judgement given twice, a
 * negative label; a run line of fewer than six fields or more than six, a score outside the strict grammar
 * of _trec_lex.h (nan included), a document retrieved twice for one query; and a run that shares no query
 * with the qrels; and any text that is not plain ASCII or holds a NUL or a byte in 0x1c..0x1f (whitespace
 * to str.split() but not to bytes.split()), byte-order marks included.
 *
 * Arithmetic is the engine's, operation for operation, so values are bit-identical: rows sorted by score
 * descending and ties by document id descending (bytewise, trec_eval's strcmp); DCG sums gain / log2(rank
 * + 1) in rank order (log2 of the C library, as the engine's discount table); the ideal sums the sorted
 * positive labels the same way; AP sums (relevant so far) / rank over the relevant rows, then divides by R;
 * P, R and RR are one division each. Means over queries are left to the caller (math.fsum, as the
 * engine's).
 *
 * evaluate(qrels, run, specs) -> None | (tag, query_ids, values, run_only_queries,
 *     run_only_rows, qrels_only_queries)
 *   specs: a tuple of (kind, cutoff) with kind 1 nDCG, 2 AP, 3 P, 4 RR, 5 R, 6 DCG and cutoff 0 for none;
 *   query_ids: the evaluated queries (in both the run and the qrels) in bytewise order, as str;
 *   values: a list of floats, query after query, one per spec.
 */
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/_trec_lex.h"

enum { NDCG = 1, AP = 2, PREC = 3, RR = 4, RECALL = 5, DCG = 6 };

typedef struct {
    const unsigned char *p;
    Py_ssize_t n;
} Str;

static int str_cmp(Str a, Str b) {
    int c = memcmp(a.p, b.p, (size_t)(a.n < b.n ? a.n : b.n));
    if (c) return c;
    return (a.n > b.n) - (a.n < b.n);
}

static inline int str_eq(Str a, Str b) {
    if (a.n != b.n) return 0;
    if (a.n > 16) return memcmp(a.p, b.p, (size_t)a.n) == 0;
    for (Py_ssize_t i = 0; i < a.n; i++) /* (ids are short: no call) */
        if (a.p[i] != b.p[i]) return 0;
    return 1;
}

/* the slots of an open-addressing table for n entries: a power of two, at most half full */
static size_t table_size(Py_ssize_t n) {
    size_t size = 64;
    while (size < (size_t)n * 2) size *= 2;
    return size;
}

/* An open-addressing set of int32 entries, each standing for a key the caller can compare (a query id);
 * the caller keeps the hashes. */
typedef struct {
    int32_t *slot;
    size_t mask;
} Set;

static int set_init(Set *s, Py_ssize_t expected) {
    size_t size = table_size(expected);
    s->slot = (int32_t *)PyMem_Malloc(size * sizeof(int32_t));
    if (s->slot == NULL) return -1;
    memset(s->slot, 0xff, size * sizeof(int32_t)); /* -1: empty */
    s->mask = size - 1;
    return 0;
}

static void set_free(Set *s) {
    PyMem_Free(s->slot);
    s->slot = NULL;
}

/* A small open-addressing table of positions within one group (a query's judgements or rows), each slot
 * stamped with the group it belongs to, so moving to the next group needs no clearing; sized to the largest
 * group, it stays in cache. */
typedef struct {
    int32_t *slot, *stamp;
    size_t mask;
} Stamped;

static int stamped_init(Stamped *t, Py_ssize_t largest) {
    size_t size = table_size(largest);
    t->slot = (int32_t *)PyMem_Malloc(size * sizeof(int32_t));
    t->stamp = (int32_t *)PyMem_Malloc(size * sizeof(int32_t));
    if (t->slot == NULL || t->stamp == NULL) return -1;
    memset(t->stamp, 0xff, size * sizeof(int32_t));
    t->mask = size - 1;
    return 0;
}

static void stamped_free(Stamped *t) {
    PyMem_Free(t->slot);
    PyMem_Free(t->stamp);
    t->slot = t->stamp = NULL;
}

/* Interned strings (query ids): their bytes, their hashes and a set over them. */
typedef struct {
    Str *str;
    uint64_t *hash;
    Py_ssize_t n, cap;
    Set set;
} Names;

static int names_init(Names *t, Py_ssize_t expected) {
    t->n = 0;
    t->cap = expected > 16 ? expected : 16;
    t->str = (Str *)PyMem_Malloc((size_t)t->cap * sizeof(Str));
    t->hash = (uint64_t *)PyMem_Malloc((size_t)t->cap * sizeof(uint64_t));
    if (t->str == NULL || t->hash == NULL) return -1;
    return set_init(&t->set, expected);
}

static void names_free(Names *t) {
    PyMem_Free(t->str);
    PyMem_Free(t->hash);
    set_free(&t->set);
}

static int names_grow_set(Names *t) {
    Set bigger;
    if (set_init(&bigger, t->n * 2) < 0) return -1;
    for (Py_ssize_t i = 0; i < t->n; i++) {
        size_t j = (size_t)t->hash[i] & bigger.mask;
        while (bigger.slot[j] >= 0) j = (j + 1) & bigger.mask;
        bigger.slot[j] = (int32_t)i;
    }
    set_free(&t->set);
    t->set = bigger;
    return 0;
}

/* the index of s (inserted when absent and insert is set; -1 when absent), -2 on memory failure */
static Py_ssize_t names_find(Names *t, Str s, int insert) {
    uint64_t h = id_hash(s.p, s.n);
    size_t j = (size_t)h & t->set.mask;
    while (t->set.slot[j] >= 0) {
        int32_t i = t->set.slot[j];
        if (t->hash[i] == h && str_eq(t->str[i], s)) return i;
        j = (j + 1) & t->set.mask;
    }
    if (!insert) return -1;
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap * 2;
        Str *str = (Str *)PyMem_Realloc(t->str, (size_t)cap * sizeof(Str));
        if (str == NULL) return -2;
        t->str = str;
        uint64_t *hash = (uint64_t *)PyMem_Realloc(t->hash, (size_t)cap * sizeof(uint64_t));
        if (hash == NULL) return -2;
        t->hash = hash;
        t->cap = cap;
    }
    Py_ssize_t i = t->n++;
    t->str[i] = s;
    t->hash[i] = h;
    t->set.slot[j] = (int32_t)i;
    if ((size_t)t->n * 2 > t->set.mask + 1 && names_grow_set(t) < 0) return -2;
    return i;
}

typedef struct {
    const unsigned char *doc;
    uint64_t doc_hash; /* id_hash of the document id */
    int32_t doc_len;
    int32_t label;
    int32_t query; /* the qrels query */
} Judgement;

typedef struct {
    double score;
    const unsigned char *doc;
    uint64_t doc_hash; /* id_hash of the document id */
    int32_t doc_len;
    int32_t label; /* the qrels label, -1 when not judged */
    int32_t query; /* the run query */
} Row;

/* score descending, then document id descending (bytewise) */
static int row_order(const void *pa, const void *pb) {
    const Row *a = (const Row *)pa, *b = (const Row *)pb;
    if (a->score > b->score) return -1;
    if (a->score < b->score) return 1;
    Str x = {a->doc, a->doc_len}, y = {b->doc, b->doc_len};
    return -str_cmp(x, y);
}

static int label_desc(const void *pa, const void *pb) {
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a < b) - (a > b);
}


/* a decimal label of 1..9 digits with an optional '-' (the general path decides anything longer) */
static int parse_label(const unsigned char *s, Py_ssize_t n, int32_t *out) {
    Py_ssize_t i = 0;
    int negative = 0;
    if (n > 0 && s[0] == '-') {
        negative = 1;
        i = 1;
    }
    if (n - i < 1 || n - i > 9) return -1;
    int32_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = negative ? -v : v;
    return 0;
}

typedef struct {
    int kind;
    Py_ssize_t cutoff; /* 0: none */
} Spec;

/* DCG over the first k rows: gain / log2(rank + 1) in rank order (unjudged and 0 labels add nothing) */
static double dcg_of(const Row *rows, Py_ssize_t k, const double *div) {
    double dcg = 0.0;
    for (Py_ssize_t r = 0; r < k; r++)
        if (rows[r].label > 0) dcg += (double)rows[r].label / div[r];
    return dcg;
}

static double measure(const Spec *s, const Row *rows, Py_ssize_t n, const int32_t *ideal, Py_ssize_t num_rel,
                      const double *div) {
    Py_ssize_t k = s->cutoff > 0 && s->cutoff < n ? s->cutoff : n;
    switch (s->kind) {
    case DCG:
        return dcg_of(rows, k, div);
    case NDCG: {
        double dcg = dcg_of(rows, k, div), idcg = 0.0;
        Py_ssize_t ki = s->cutoff > 0 && s->cutoff < num_rel ? s->cutoff : num_rel; /* (the ideal: R labels) */
        for (Py_ssize_t r = 0; r < ki; r++) idcg += (double)ideal[r] / div[r];
        return idcg > 0.0 ? dcg / idcg : 0.0;
    }
    case AP: {
        double total = 0.0, seen = 0.0;
        for (Py_ssize_t r = 0; r < k; r++)
            if (rows[r].label >= 1) {
                seen += 1.0;
                total += seen / ((double)r + 1.0);
            }
        return num_rel > 0 ? total / (double)num_rel : 0.0;
    }
    case PREC:
    case RECALL: {
        Py_ssize_t hits = 0;
        for (Py_ssize_t r = 0; r < k; r++) hits += rows[r].label >= 1;
        if (s->kind == PREC) return (double)hits / (double)s->cutoff;
        return num_rel > 0 ? (double)hits / (double)num_rel : 0.0;
    }
    case RR:
        for (Py_ssize_t r = 0; r < k; r++)
            if (rows[r].label >= 1) return 1.0 / ((double)r + 1.0);
        return 0.0;
    }
    return 0.0;
}

/* Whether every byte is ASCII and none is NUL or one of 0x1c..0x1f (whitespace to str.split() only), in
 * one branch-free pass the compiler vectorises. */
static int plain_text(const unsigned char *u, Py_ssize_t n) {
    unsigned bad = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char b = u[i];
        bad |= (unsigned)(b >= 0x80) | (unsigned)(b == 0) | (unsigned)((unsigned char)(b - 0x1c) < 4);
    }
    return bad == 0;
}

/* the length without trailing whitespace (space, tab, CR, LF, VT, FF) */
static Py_ssize_t text_end(const unsigned char *u, Py_ssize_t n) {
    while (n > 0 && (u[n - 1] == ' ' || (u[n - 1] >= 9 && u[n - 1] <= 13))) n--;
    return n;
}

/* ---------------------------------------------------------------------------------------------- qrels */

/* The qrels, parsed once for all the runs and blocks: every judgement, query by query, with each query's
 * positive labels sorted descending (the ideal ranking) and its R. */
typedef struct {
    PyObject *text; /* the bytes the judgements point into (a strong reference) */
    Names queries;
    Judgement *judgements;
    int32_t *jorder;       /* judgements grouped by query */
    Py_ssize_t *jstart;    /* query q's judgements: jorder[jstart[q] .. jstart[q+1]) */
    int32_t *ideal;        /* query q's positive labels, descending: ideal[ideal_start[q] ..] */
    Py_ssize_t *ideal_start, *num_rel;
    Py_ssize_t n_judgements, most_judged;
    Stamped judged_of;     /* one query's judgements at a time, by document */
    int32_t stamp;         /* the next stamp of judged_of */
} Qrels;

static void qrels_free(Qrels *qr) {
    if (qr == NULL) return;
    Py_XDECREF(qr->text);
    names_free(&qr->queries);
    PyMem_Free(qr->judgements);
    PyMem_Free(qr->jorder);
    PyMem_Free(qr->jstart);
    PyMem_Free(qr->ideal);
    PyMem_Free(qr->ideal_start);
    PyMem_Free(qr->num_rel);
    stamped_free(&qr->judged_of);
    PyMem_Free(qr);
}

static void qrels_capsule_free(PyObject *capsule) { qrels_free((Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels")); }

/* The qrels of text, or NULL with *declined set (or an exception: memory) */
static Qrels *qrels_parse(PyObject *text_obj, int *declined) {
    char *data;
    Py_ssize_t size;
    *declined = 0;
    if (PyBytes_AsStringAndSize(text_obj, &data, &size) < 0) return NULL;
    const unsigned char *u = (const unsigned char *)data;
    Py_ssize_t end = text_end(u, size);
    if (end == 0 || !plain_text(u, size)) {
        *declined = 1;
        return NULL;
    }
    Qrels *qr = (Qrels *)PyMem_Calloc(1, sizeof(Qrels));
    if (qr == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_INCREF(text_obj);
    qr->text = text_obj;
    Py_ssize_t n_j = 0, cap_j = end / 16 + 16, pos = 0, last_qi = -1;
    Str last_q = {NULL, -1};
    if (names_init(&qr->queries, 1024) < 0) goto nomem;
    qr->judgements = (Judgement *)PyMem_Malloc((size_t)cap_j * sizeof(Judgement));
    if (!qr->judgements) goto nomem;
    while (pos < end) {
        Py_ssize_t starts[4], lens[4];
        int more;
        int fields = line_fields(u, &pos, end, size, starts, lens, 4, &more);
        if (fields == 0) continue;
        if (fields != 4 || more || u[starts[0]] == '#') goto decline;
        int32_t label;
        if (parse_label(u + starts[3], lens[3], &label) < 0 || label < 0 || lens[2] > INT32_MAX) goto decline;
        Str q = {u + starts[0], lens[0]};
        if (!str_eq(q, last_q)) {
            last_qi = names_find(&qr->queries, q, 1);
            if (last_qi == -2) goto nomem;
            last_q = q;
        }
        if (n_j == cap_j) {
            cap_j *= 2;
            Judgement *a = (Judgement *)PyMem_Realloc(qr->judgements, (size_t)cap_j * sizeof(Judgement));
            if (a == NULL) goto nomem;
            qr->judgements = a;
        }
        Judgement *jg = qr->judgements + n_j++;
        jg->doc = u + starts[2];
        jg->doc_len = (int32_t)lens[2];
        jg->doc_hash = id_hash(jg->doc, lens[2]);
        jg->label = label;
        jg->query = (int32_t)last_qi;
    }
    if (n_j == 0 || n_j > INT32_MAX / 4) goto decline;
    qr->n_judgements = n_j;
    Py_ssize_t nq = qr->queries.n;
    /* the judgements query by query (a counting sort), then no document twice within a query */
    qr->jstart = (Py_ssize_t *)PyMem_Calloc((size_t)nq + 1, sizeof(Py_ssize_t));
    qr->jorder = (int32_t *)PyMem_Malloc((size_t)n_j * sizeof(int32_t));
    Py_ssize_t *fill = (Py_ssize_t *)PyMem_Malloc(((size_t)nq + 1) * sizeof(Py_ssize_t));
    if (!qr->jstart || !qr->jorder || !fill) {
        PyMem_Free(fill);
        goto nomem;
    }
    for (Py_ssize_t i = 0; i < n_j; i++) qr->jstart[qr->judgements[i].query + 1]++;
    for (Py_ssize_t q = 0; q < nq; q++) qr->jstart[q + 1] += qr->jstart[q];
    memcpy(fill, qr->jstart, ((size_t)nq + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n_j; i++) qr->jorder[fill[qr->judgements[i].query]++] = (int32_t)i;
    for (Py_ssize_t q = 0; q < nq; q++)
        if (qr->jstart[q + 1] - qr->jstart[q] > qr->most_judged) qr->most_judged = qr->jstart[q + 1] - qr->jstart[q];
    if (stamped_init(&qr->judged_of, qr->most_judged) < 0) {
        PyMem_Free(fill);
        goto nomem;
    }
    Stamped *t = &qr->judged_of;
    for (Py_ssize_t q = 0; q < nq; q++, qr->stamp++)
        for (Py_ssize_t k = qr->jstart[q]; k < qr->jstart[q + 1]; k++) {
            const Judgement *jg = qr->judgements + qr->jorder[k];
            size_t j = (size_t)jg->doc_hash & t->mask;
            while (t->stamp[j] == qr->stamp) {
                const Judgement *o = qr->judgements + t->slot[j];
                Str x = {o->doc, o->doc_len}, y = {jg->doc, jg->doc_len};
                if (o->doc_hash == jg->doc_hash && str_eq(x, y)) {
                    PyMem_Free(fill);
                    goto decline;
                }
                j = (j + 1) & t->mask;
            }
            t->stamp[j] = qr->stamp;
            t->slot[j] = qr->jorder[k];
        }
    /* every query's positive labels, sorted descending, and its R */
    qr->ideal_start = (Py_ssize_t *)PyMem_Calloc((size_t)nq + 1, sizeof(Py_ssize_t));
    qr->num_rel = (Py_ssize_t *)PyMem_Calloc((size_t)nq + 1, sizeof(Py_ssize_t));
    qr->ideal = (int32_t *)PyMem_Malloc((size_t)n_j * sizeof(int32_t));
    if (!qr->ideal_start || !qr->num_rel || !qr->ideal) {
        PyMem_Free(fill);
        goto nomem;
    }
    for (Py_ssize_t i = 0; i < n_j; i++)
        if (qr->judgements[i].label > 0) qr->num_rel[qr->judgements[i].query]++;
    for (Py_ssize_t q = 0; q < nq; q++) qr->ideal_start[q + 1] = qr->ideal_start[q] + qr->num_rel[q];
    memcpy(fill, qr->ideal_start, ((size_t)nq + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n_j; i++)
        if (qr->judgements[i].label > 0) qr->ideal[fill[qr->judgements[i].query]++] = qr->judgements[i].label;
    PyMem_Free(fill);
    for (Py_ssize_t q = 0; q < nq; q++)
        qsort(qr->ideal + qr->ideal_start[q], (size_t)qr->num_rel[q], sizeof(int32_t), label_desc);
    return qr;

decline:
    *declined = 1;
    qrels_free(qr);
    return NULL;
nomem:
    PyErr_NoMemory();
    qrels_free(qr);
    return NULL;
}

/* parse_qrels(text) -> None | (qrels, number of queries) */
static PyObject *parse_qrels(PyObject *self, PyObject *args) {
    PyObject *text;
    (void)self;
    if (!PyArg_ParseTuple(args, "S", &text)) return NULL;
    int declined;
    Qrels *qr = qrels_parse(text, &declined);
    if (qr == NULL) {
        if (declined) Py_RETURN_NONE;
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(qr, "ranklens.qrels", qrels_capsule_free);
    if (capsule == NULL) {
        qrels_free(qr);
        return NULL;
    }
    return Py_BuildValue("(Nn)", capsule, qr->queries.n);
}

/* ------------------------------------------------------------------------------------------------ runs */

static int read_specs(PyObject *specs_obj, Spec *specs, Py_ssize_t *n_specs) {
    *n_specs = PyTuple_Size(specs_obj);
    if (*n_specs < 1 || *n_specs > 64) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "between 1 and 64 measures");
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n_specs; i++) {
        PyObject *item = PyTuple_GetItem(specs_obj, i);
        int kind;
        Py_ssize_t cutoff;
        if (item == NULL || !PyArg_ParseTuple(item, "in", &kind, &cutoff)) return -1;
        if (kind < NDCG || kind > DCG || cutoff < 0 || (kind == PREC && cutoff == 0)) {
            PyErr_SetString(PyExc_ValueError, "bad measure spec");
            return -1;
        }
        specs[i].kind = kind;
        specs[i].cutoff = cutoff;
    }
    return 0;
}

/* evaluate_block(qrels, text, end, specs, final) -> None | (tag, run_queries, evaluated, values,
 *     run_only_rows, consumed, rows, grouped)
 *
 * Evaluates the queries of text[:end] (end: a line boundary; with final, the whole text, trailing
 * whitespace ignored). Unless final, the last query of the block is left for the next block: consumed is
 * where its first line starts, and the caller passes the text from there again with what follows (0: the
 * block holds one query only, so the caller passes a longer one). The block's queries must come one after
 * another (a query seen again after another is declined: the general path reads such a run whole).
 *   tag: the first row's tag (bytes), None when the block has no row;
 *   run_queries: every query of the rows evaluated or ignored, in file order (str);
 *   evaluated: the queries also in the qrels, in file order, and values: their values, query after query,
 *   one per spec; rows: the rows evaluated or ignored; grouped: whether each query's rows came together
 *   (only a final block may hold a query that comes back after others). */
static PyObject *evaluate_block(PyObject *self, PyObject *args) {
    PyObject *capsule, *text_obj, *specs_obj;
    Py_ssize_t end_arg;
    int final;
    (void)self;
    if (!PyArg_ParseTuple(args, "OSnOp", &capsule, &text_obj, &end_arg, &specs_obj, &final)) return NULL;
    Qrels *qr = (Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels");
    if (qr == NULL) return NULL;
    Spec specs[64];
    Py_ssize_t n_specs;
    if (read_specs(specs_obj, specs, &n_specs) < 0) return NULL;
    char *rdata;
    Py_ssize_t rsize;
    if (PyBytes_AsStringAndSize(text_obj, &rdata, &rsize) < 0) return NULL;
    if (end_arg < 0 || end_arg > rsize) {
        PyErr_SetString(PyExc_ValueError, "end outside the data");
        return NULL;
    }
    const unsigned char *ru = (const unsigned char *)rdata;
    if (!plain_text(ru, end_arg)) Py_RETURN_NONE;
    Py_ssize_t rend = final ? text_end(ru, end_arg) : end_arg;

    PyObject *result = NULL;
    Names rq = {0};
    Stamped retrieved = {0};
    Row *rows = NULL, *grouped = NULL;
    Py_ssize_t *qstart = NULL, *rq_map = NULL, *line_of = NULL;
    double *div = NULL;
    Py_ssize_t n_rows = 0, cap_rows = rend / 32 + 16, cap_q = 1024;
    if (names_init(&rq, 1024) < 0) goto nomem;
    rows = (Row *)PyMem_Malloc((size_t)cap_rows * sizeof(Row));
    line_of = (Py_ssize_t *)PyMem_Malloc((size_t)cap_q * sizeof(Py_ssize_t)); /* where each query's first line starts */
    if (!rows || !line_of) goto nomem;
    Str tag = {NULL, 0}, last_q = {NULL, -1};
    Py_ssize_t last_qi = -1, pos = 0;
    int in_order = 1; /* the rows come query after query (as run files are written) */
    while (pos < rend) {
        Py_ssize_t line_start = pos, starts[6], lens[6];
        int more;
        int fields = line_fields(ru, &pos, rend, rsize, starts, lens, 6, &more);
        if (fields == 0 || ru[starts[0]] == '#') continue;
        if (fields != 6 || more) goto decline;
        double score;
        if (parse_score(rdata + starts[4], lens[4], &score) < 0) goto decline;
        Str q = {ru + starts[0], lens[0]};
        if (!str_eq(q, last_q)) {
            Py_ssize_t before = rq.n;
            last_qi = names_find(&rq, q, 1);
            if (last_qi == -2) goto nomem;
            if (last_qi < before) {
                if (!final) goto decline; /* not grouped: the general path reads it whole */
                in_order = 0;
            } else {
                if (rq.n > cap_q) {
                    cap_q *= 2;
                    Py_ssize_t *a = (Py_ssize_t *)PyMem_Realloc(line_of, (size_t)cap_q * sizeof(Py_ssize_t));
                    if (a == NULL) goto nomem;
                    line_of = a;
                }
                line_of[last_qi] = line_start;
            }
            last_q = q;
        }
        if (n_rows == cap_rows) {
            cap_rows *= 2;
            Row *a = (Row *)PyMem_Realloc(rows, (size_t)cap_rows * sizeof(Row));
            if (a == NULL) goto nomem;
            rows = a;
        }
        if (lens[2] > INT32_MAX) goto decline;
        Row *row = rows + n_rows++;
        row->score = score;
        row->doc = ru + starts[2];
        row->doc_len = (int32_t)lens[2];
        row->doc_hash = id_hash(row->doc, lens[2]);
        row->query = (int32_t)last_qi;
        row->label = -1;
        if (tag.p == NULL) {
            tag.p = ru + starts[5];
            tag.n = lens[5];
        }
    }
    if (n_rows > INT32_MAX / 4) goto decline;
    Py_ssize_t consumed = rend, n_q = rq.n;
    if (!final) { /* the last query waits for the rest of its rows */
        if (n_q <= 1) {
            consumed = 0;
            n_q = 0;
            n_rows = 0;
        } else {
            n_q--;
            consumed = line_of[n_q];
            while (n_rows > 0 && rows[n_rows - 1].query == n_q) n_rows--;
        }
    }

    /* run queries → qrels queries */
    rq_map = (Py_ssize_t *)PyMem_Malloc(((size_t)n_q + 1) * sizeof(Py_ssize_t));
    qstart = (Py_ssize_t *)PyMem_Calloc((size_t)n_q + 1, sizeof(Py_ssize_t));
    if (rq_map == NULL || qstart == NULL) goto nomem;
    Py_ssize_t both = 0, run_only_rows = 0;
    for (Py_ssize_t q = 0; q < n_q; q++) {
        rq_map[q] = names_find(&qr->queries, rq.str[q], 0);
        both += rq_map[q] >= 0;
    }

    /* group the rows by run query (a counting sort that keeps the file order; nothing to move when the
     * file is written query after query) */
    for (Py_ssize_t i = 0; i < n_rows; i++) qstart[rows[i].query + 1]++;
    for (Py_ssize_t q = 0; q < n_q; q++) qstart[q + 1] += qstart[q];
    if (in_order) {
        grouped = rows;
        rows = NULL;
    } else {
        grouped = (Row *)PyMem_Malloc(((size_t)n_rows + 1) * sizeof(Row));
        Py_ssize_t *fill = (Py_ssize_t *)PyMem_Malloc(((size_t)n_q + 1) * sizeof(Py_ssize_t));
        if (grouped == NULL || fill == NULL) {
            PyMem_Free(fill);
            goto nomem;
        }
        memcpy(fill, qstart, ((size_t)n_q + 1) * sizeof(Py_ssize_t));
        for (Py_ssize_t i = 0; i < n_rows; i++) grouped[fill[rows[i].query]++] = rows[i];
        PyMem_Free(fill);
        PyMem_Free(rows);
        rows = NULL;
    }

    /* per query: no document twice (a set sized to the longest query, so it stays in cache), the labels
     * of the queries in both, and the ranking (skipped when the file is in rank order already) */
    Py_ssize_t longest = 0;
    for (Py_ssize_t q = 0; q < n_q; q++)
        if (qstart[q + 1] - qstart[q] > longest) longest = qstart[q + 1] - qstart[q];
    if (stamped_init(&retrieved, longest) < 0) goto nomem;
    Stamped *jt = &qr->judged_of;
    for (Py_ssize_t q = 0; q < n_q; q++) {
        Row *g = grouped + qstart[q];
        Py_ssize_t n = qstart[q + 1] - qstart[q], qi = rq_map[q];
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t j = (size_t)g[i].doc_hash & retrieved.mask;
            while (retrieved.stamp[j] == (int32_t)q) {
                const Row *o = g + retrieved.slot[j];
                Str x = {o->doc, o->doc_len}, y = {g[i].doc, g[i].doc_len};
                if (o->doc_hash == g[i].doc_hash && str_eq(x, y)) goto decline;
                j = (j + 1) & retrieved.mask;
            }
            retrieved.stamp[j] = (int32_t)q;
            retrieved.slot[j] = (int32_t)i;
        }
        if (qi < 0) {
            run_only_rows += n;
            continue;
        }
        /* the query's judgements in the small table, then every row's label from it */
        int32_t stamp = qr->stamp++;
        for (Py_ssize_t k = qr->jstart[qi]; k < qr->jstart[qi + 1]; k++) {
            size_t j = (size_t)qr->judgements[qr->jorder[k]].doc_hash & jt->mask;
            while (jt->stamp[j] == stamp) j = (j + 1) & jt->mask;
            jt->stamp[j] = stamp;
            jt->slot[j] = qr->jorder[k];
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t j = (size_t)g[i].doc_hash & jt->mask;
            while (jt->stamp[j] == stamp) {
                const Judgement *o = qr->judgements + jt->slot[j];
                Str x = {o->doc, o->doc_len}, y = {g[i].doc, g[i].doc_len};
                if (o->doc_hash == g[i].doc_hash && str_eq(x, y)) {
                    g[i].label = o->label;
                    break;
                }
                j = (j + 1) & jt->mask;
            }
        }
        Py_ssize_t i = 1;
        while (i < n && row_order(g + i - 1, g + i) < 0) i++;
        if (i < n) qsort(g, (size_t)n, sizeof(Row), row_order);
        if (qr->num_rel[qi] > longest) longest = qr->num_rel[qi];
    }
    div = (double *)PyMem_Malloc(((size_t)longest + 1) * sizeof(double));
    if (div == NULL) goto nomem;
    for (Py_ssize_t r = 0; r <= longest; r++) div[r] = log2((double)r + 2.0);

    PyObject *run_queries = PyList_New(n_q), *evaluated = PyList_New(both), *values = PyList_New(both * n_specs);
    if (run_queries == NULL || evaluated == NULL || values == NULL) goto fail_lists;
    for (Py_ssize_t q = 0, e = 0; q < n_q; q++) {
        PyObject *name = PyUnicode_FromStringAndSize((const char *)rq.str[q].p, rq.str[q].n);
        if (name == NULL) goto fail_lists;
        PyList_SetItem(run_queries, q, name);
        Py_ssize_t qi = rq_map[q];
        if (qi < 0) continue;
        Py_INCREF(name);
        PyList_SetItem(evaluated, e, name);
        const Row *r0 = grouped + qstart[q];
        Py_ssize_t n = qstart[q + 1] - qstart[q];
        for (Py_ssize_t s = 0; s < n_specs; s++) {
            double v = measure(&specs[s], r0, n, qr->ideal + qr->ideal_start[qi], qr->num_rel[qi], div);
            PyObject *f = PyFloat_FromDouble(v);
            if (f == NULL) goto fail_lists;
            PyList_SetItem(values, e * n_specs + s, f);
        }
        e++;
    }
    PyObject *tag_obj;
    if (tag.p != NULL) {
        tag_obj = PyBytes_FromStringAndSize((const char *)tag.p, tag.n);
        if (tag_obj == NULL) goto fail_lists;
    } else {
        tag_obj = Py_None;
        Py_INCREF(tag_obj);
    }
    result = Py_BuildValue("(NNNNnnnO)", tag_obj, run_queries, evaluated, values, run_only_rows, consumed, n_rows,
                           in_order ? Py_True : Py_False);
    goto done;

fail_lists:
    Py_XDECREF(run_queries);
    Py_XDECREF(evaluated);
    Py_XDECREF(values);
    goto done;
decline:
    result = Py_None;
    Py_INCREF(result);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    names_free(&rq);
    stamped_free(&retrieved);
    PyMem_Free(rows);
    PyMem_Free(grouped);
    PyMem_Free(qstart);
    PyMem_Free(rq_map);
    PyMem_Free(line_of);
    PyMem_Free(div);
    return result;
}

static PyMethodDef methods[] = {
    {"parse_qrels", parse_qrels, METH_VARARGS, "parse_qrels(text) -> None or (qrels, number of queries)"},
    {"evaluate_block", evaluate_block, METH_VARARGS,
     "evaluate_block(qrels, text, end, specs, final) -> None or (tag, run_queries, evaluated, values, "
     "run_only_rows, consumed, rows, grouped)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cexpress", "Compiled express evaluation of TREC text (see ranklens.express).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cexpress(void) {
    init_class();
    return PyModule_Create(&module);
}
