/* The express evaluation (issue 12): TREC qrels and one TREC run, as bytes, to the per-query values of the
 * common measures (nDCG, AP, P, RR and R, each with or without a cutoff, default parameters), in one
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
 *   specs: a tuple of (kind, cutoff) with kind 1 nDCG, 2 AP, 3 P, 4 RR, 5 R and cutoff 0 for none;
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

enum { NDCG = 1, AP = 2, PREC = 3, RR = 4, RECALL = 5 };

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

/* An open-addressing set of int32 entries, each standing for a key the caller can compare (a query id,
 * or a (query, document) pair); the caller keeps the hashes. */
typedef struct {
    int32_t *slot;
    size_t mask;
} Set;

static int set_init(Set *s, Py_ssize_t expected) {
    size_t size = 64;
    while (size < (size_t)expected * 2) size *= 2;
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
    size_t size = 64;
    while (size < (size_t)largest * 2) size *= 2;
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

/* qsort has no context argument in C99: the names the query order compares (the GIL is held) */
static const Str *ORDER_NAMES;

static int query_order(const void *pa, const void *pb) {
    return str_cmp(ORDER_NAMES[*(const int32_t *)pa], ORDER_NAMES[*(const int32_t *)pb]);
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

static double measure(const Spec *s, const Row *rows, Py_ssize_t n, const int32_t *ideal, Py_ssize_t n_ideal,
                      Py_ssize_t num_rel, const double *div) {
    Py_ssize_t k = s->cutoff > 0 && s->cutoff < n ? s->cutoff : n;
    switch (s->kind) {
    case NDCG: {
        double dcg = 0.0, idcg = 0.0;
        for (Py_ssize_t r = 0; r < k; r++)
            if (rows[r].label > 0) dcg += (double)rows[r].label / div[r];
        Py_ssize_t ki = s->cutoff > 0 && s->cutoff < n_ideal ? s->cutoff : n_ideal;
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

static PyObject *evaluate(PyObject *self, PyObject *args) {
    PyObject *qrels_obj, *run_obj, *specs_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "SSO", &qrels_obj, &run_obj, &specs_obj)) return NULL;
    char *qdata, *rdata;
    Py_ssize_t qsize, rsize;
    if (PyBytes_AsStringAndSize(qrels_obj, &qdata, &qsize) < 0 || PyBytes_AsStringAndSize(run_obj, &rdata, &rsize) < 0)
        return NULL;
    if (!plain_text((const unsigned char *)qdata, qsize) || !plain_text((const unsigned char *)rdata, rsize))
        Py_RETURN_NONE;
    Py_ssize_t qend = text_end((const unsigned char *)qdata, qsize), rend = text_end((const unsigned char *)rdata, rsize);
    if (qend == 0 || rend == 0) Py_RETURN_NONE;
    Py_ssize_t n_specs = PyTuple_Size(specs_obj);
    if (n_specs < 1 || n_specs > 64) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 64 measures");
        return NULL;
    }
    Spec specs[64];
    for (Py_ssize_t i = 0; i < n_specs; i++) {
        PyObject *item = PyTuple_GetItem(specs_obj, i);
        int kind;
        Py_ssize_t cutoff;
        if (item == NULL || !PyArg_ParseTuple(item, "in", &kind, &cutoff)) return NULL;
        if (kind < NDCG || kind > RECALL || cutoff < 0 || (kind == PREC && cutoff == 0)) {
            PyErr_SetString(PyExc_ValueError, "bad measure spec");
            return NULL;
        }
        specs[i].kind = kind;
        specs[i].cutoff = cutoff;
    }

    PyObject *result = NULL;
    const unsigned char *qu = (const unsigned char *)qdata, *ru = (const unsigned char *)rdata;
    Names qq = {0}, rq = {0};
    Stamped judged_of = {0}, retrieved = {0};
    Judgement *judgements = NULL;
    int32_t *jorder = NULL, *ideal = NULL, *order = NULL;
    Py_ssize_t *jstart = NULL, *ideal_start = NULL, *num_rel = NULL, *qstart = NULL, *rq_map = NULL;
    Row *rows = NULL, *grouped = NULL;
    double *div = NULL;
    Py_ssize_t n_j = 0, cap_j = qend / 16 + 16, n_rows = 0, cap_rows = rend / 32 + 16;
    if (names_init(&qq, 1024) < 0 || names_init(&rq, 1024) < 0) goto nomem;

    /* ---- the qrels: query, iteration, document, label; every judgement once */
    judgements = (Judgement *)PyMem_Malloc((size_t)cap_j * sizeof(Judgement));
    if (!judgements) goto nomem;
    Py_ssize_t pos = 0, last_qi = -1;
    Str last_q = {NULL, -1};
    while (pos < qend) {
        Py_ssize_t starts[4], lens[4];
        int more;
        int fields = line_fields(qu, &pos, qend, qsize, starts, lens, 4, &more);
        if (fields == 0) continue;
        if (fields != 4 || more || qu[starts[0]] == '#') goto decline;
        int32_t label;
        if (parse_label(qu + starts[3], lens[3], &label) < 0 || label < 0 || lens[2] > INT32_MAX) goto decline;
        Str q = {qu + starts[0], lens[0]};
        if (!str_eq(q, last_q)) {
            last_qi = names_find(&qq, q, 1);
            if (last_qi == -2) goto nomem;
            last_q = q;
        }
        if (n_j == cap_j) {
            cap_j *= 2;
            Judgement *a = (Judgement *)PyMem_Realloc(judgements, (size_t)cap_j * sizeof(Judgement));
            if (a == NULL) goto nomem;
            judgements = a;
        }
        Judgement *jg = judgements + n_j++;
        jg->doc = qu + starts[2];
        jg->doc_len = (int32_t)lens[2];
        jg->doc_hash = id_hash(jg->doc, lens[2]);
        jg->label = label;
        jg->query = (int32_t)last_qi;
    }
    if (n_j == 0 || n_j > INT32_MAX / 4) goto decline;
    /* the judgements query by query (a counting sort), then no document twice within a query */
    jstart = (Py_ssize_t *)PyMem_Calloc((size_t)qq.n + 1, sizeof(Py_ssize_t));
    jorder = (int32_t *)PyMem_Malloc((size_t)n_j * sizeof(int32_t));
    if (!jstart || !jorder) goto nomem;
    for (Py_ssize_t i = 0; i < n_j; i++) jstart[judgements[i].query + 1]++;
    for (Py_ssize_t q = 0; q < qq.n; q++) jstart[q + 1] += jstart[q];
    {
        Py_ssize_t *fill = (Py_ssize_t *)PyMem_Malloc(((size_t)qq.n + 1) * sizeof(Py_ssize_t));
        if (fill == NULL) goto nomem;
        memcpy(fill, jstart, ((size_t)qq.n + 1) * sizeof(Py_ssize_t));
        for (Py_ssize_t i = 0; i < n_j; i++) jorder[fill[judgements[i].query]++] = (int32_t)i;
        PyMem_Free(fill);
    }
    Py_ssize_t most_judged = 0;
    for (Py_ssize_t q = 0; q < qq.n; q++)
        if (jstart[q + 1] - jstart[q] > most_judged) most_judged = jstart[q + 1] - jstart[q];
    if (stamped_init(&judged_of, most_judged) < 0) goto nomem;
    int32_t stamp = 0; /* one stamp per table filled */
    for (Py_ssize_t q = 0; q < qq.n; q++, stamp++)
        for (Py_ssize_t k = jstart[q]; k < jstart[q + 1]; k++) {
            const Judgement *jg = judgements + jorder[k];
            size_t j = (size_t)jg->doc_hash & judged_of.mask;
            while (judged_of.stamp[j] == stamp) {
                const Judgement *o = judgements + judged_of.slot[j];
                Str x = {o->doc, o->doc_len}, y = {jg->doc, jg->doc_len};
                if (o->doc_hash == jg->doc_hash && str_eq(x, y)) goto decline;
                j = (j + 1) & judged_of.mask;
            }
            judged_of.stamp[j] = stamp;
            judged_of.slot[j] = jorder[k];
        }
    /* every qrels query's positive labels, sorted descending (the ideal ranking), and its R */
    ideal_start = (Py_ssize_t *)PyMem_Calloc((size_t)qq.n + 1, sizeof(Py_ssize_t));
    num_rel = (Py_ssize_t *)PyMem_Calloc((size_t)qq.n + 1, sizeof(Py_ssize_t));
    ideal = (int32_t *)PyMem_Malloc((size_t)n_j * sizeof(int32_t));
    if (!ideal_start || !num_rel || !ideal) goto nomem;
    for (Py_ssize_t i = 0; i < n_j; i++)
        if (judgements[i].label > 0) num_rel[judgements[i].query]++;
    for (Py_ssize_t q = 0; q < qq.n; q++) ideal_start[q + 1] = ideal_start[q] + num_rel[q];
    {
        Py_ssize_t *fill = (Py_ssize_t *)PyMem_Malloc(((size_t)qq.n + 1) * sizeof(Py_ssize_t));
        if (fill == NULL) goto nomem;
        memcpy(fill, ideal_start, ((size_t)qq.n + 1) * sizeof(Py_ssize_t));
        for (Py_ssize_t i = 0; i < n_j; i++)
            if (judgements[i].label > 0) ideal[fill[judgements[i].query]++] = judgements[i].label;
        PyMem_Free(fill);
    }
    for (Py_ssize_t q = 0; q < qq.n; q++)
        qsort(ideal + ideal_start[q], (size_t)num_rel[q], sizeof(int32_t), label_desc);

    /* ---- the run: six fields, a score in the strict grammar, the first row's tag */
    rows = (Row *)PyMem_Malloc((size_t)cap_rows * sizeof(Row));
    if (!rows) goto nomem;
    Str tag = {NULL, 0};
    last_q.p = NULL;
    last_q.n = -1;
    last_qi = -1;
    int in_order = 1; /* the rows come query after query (as run files are written) */
    pos = 0;
    while (pos < rend) {
        Py_ssize_t starts[6], lens[6];
        int more;
        int fields = line_fields(ru, &pos, rend, rsize, starts, lens, 6, &more);
        if (fields == 0 || ru[starts[0]] == '#') continue;
        if (fields != 6 || more) goto decline;
        double score;
        if (parse_score(rdata + starts[4], lens[4], &score) < 0) goto decline;
        Str q = {ru + starts[0], lens[0]};
        Py_ssize_t qi = last_qi;
        if (!str_eq(q, last_q)) {
            Py_ssize_t before = rq.n;
            qi = names_find(&rq, q, 1);
            if (qi == -2) goto nomem;
            if (qi < before) in_order = 0; /* a query seen before, after another */
            last_q = q;
            last_qi = qi;
        }
        if (n_rows == cap_rows) {
            cap_rows *= 2;
            Row *a = (Row *)PyMem_Realloc(rows, (size_t)cap_rows * sizeof(Row));
            if (a == NULL) goto nomem;
            rows = a;
        }
        if (lens[2] > INT32_MAX) goto decline;
        Row *row = rows + n_rows;
        row->score = score;
        row->doc = ru + starts[2];
        row->doc_len = (int32_t)lens[2];
        row->doc_hash = id_hash(row->doc, lens[2]);
        row->query = (int32_t)qi;
        row->label = -1;
        if (tag.p == NULL) {
            tag.p = ru + starts[5];
            tag.n = lens[5];
        }
        n_rows++;
    }
    if (n_rows == 0 || n_rows > INT32_MAX / 4) goto decline;

    /* run queries → qrels queries */
    rq_map = (Py_ssize_t *)PyMem_Malloc(((size_t)rq.n + 1) * sizeof(Py_ssize_t));
    if (rq_map == NULL) goto nomem;
    Py_ssize_t both = 0, run_only_rows = 0;
    for (Py_ssize_t q = 0; q < rq.n; q++) {
        rq_map[q] = names_find(&qq, rq.str[q], 0);
        both += rq_map[q] >= 0;
    }
    if (both == 0) goto decline; /* nothing evaluated: the general path says so */

    /* group the rows by run query (a counting sort that keeps the file order; nothing to move when the
     * file is written query after query) */
    qstart = (Py_ssize_t *)PyMem_Calloc((size_t)rq.n + 1, sizeof(Py_ssize_t));
    if (!qstart) goto nomem;
    for (Py_ssize_t i = 0; i < n_rows; i++) qstart[rows[i].query + 1]++;
    for (Py_ssize_t q = 0; q < rq.n; q++) qstart[q + 1] += qstart[q];
    if (in_order) {
        grouped = rows;
        rows = NULL;
    } else {
        grouped = (Row *)PyMem_Malloc((size_t)n_rows * sizeof(Row));
        Py_ssize_t *fill = (Py_ssize_t *)PyMem_Malloc(((size_t)rq.n + 1) * sizeof(Py_ssize_t));
        if (grouped == NULL || fill == NULL) {
            PyMem_Free(fill);
            goto nomem;
        }
        memcpy(fill, qstart, ((size_t)rq.n + 1) * sizeof(Py_ssize_t));
        for (Py_ssize_t i = 0; i < n_rows; i++) grouped[fill[rows[i].query]++] = rows[i];
        PyMem_Free(fill);
        PyMem_Free(rows);
        rows = NULL;
    }

    /* per query: no document twice (a set sized to the longest query, so it stays in cache), the labels
     * of the queries in both, and the ranking (skipped when the file is in rank order already) */
    Py_ssize_t longest = 0;
    for (Py_ssize_t q = 0; q < rq.n; q++) {
        Py_ssize_t n = qstart[q + 1] - qstart[q];
        if (n > longest) longest = n;
    }
    if (stamped_init(&retrieved, longest) < 0) goto nomem;
    for (Py_ssize_t q = 0; q < rq.n; q++) {
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
        for (Py_ssize_t k = jstart[qi]; k < jstart[qi + 1]; k++) {
            size_t j = (size_t)judgements[jorder[k]].doc_hash & judged_of.mask;
            while (judged_of.stamp[j] == stamp) j = (j + 1) & judged_of.mask;
            judged_of.stamp[j] = stamp;
            judged_of.slot[j] = jorder[k];
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t j = (size_t)g[i].doc_hash & judged_of.mask;
            while (judged_of.stamp[j] == stamp) {
                const Judgement *o = judgements + judged_of.slot[j];
                Str x = {o->doc, o->doc_len}, y = {g[i].doc, g[i].doc_len};
                if (o->doc_hash == g[i].doc_hash && str_eq(x, y)) {
                    g[i].label = o->label;
                    break;
                }
                j = (j + 1) & judged_of.mask;
            }
        }
        stamp++;
        Py_ssize_t i = 1;
        while (i < n && row_order(g + i - 1, g + i) < 0) i++;
        if (i < n) qsort(g, (size_t)n, sizeof(Row), row_order);
        if (num_rel[qi] > longest) longest = num_rel[qi];
    }
    div = (double *)PyMem_Malloc(((size_t)longest + 1) * sizeof(double));
    if (div == NULL) goto nomem;
    for (Py_ssize_t r = 0; r <= longest; r++) div[r] = log2((double)r + 2.0);

    /* the evaluated queries in bytewise order of their ids */
    order = (int32_t *)PyMem_Malloc((size_t)both * sizeof(int32_t));
    if (order == NULL) goto nomem;
    Py_ssize_t n_eval = 0;
    for (Py_ssize_t q = 0; q < rq.n; q++)
        if (rq_map[q] >= 0) order[n_eval++] = (int32_t)q;
    ORDER_NAMES = rq.str;
    qsort(order, (size_t)n_eval, sizeof(int32_t), query_order);
    ORDER_NAMES = NULL;

    PyObject *ids = PyList_New(n_eval), *values = PyList_New(n_eval * n_specs);
    if (ids == NULL || values == NULL) {
        Py_XDECREF(ids);
        Py_XDECREF(values);
        goto fail;
    }
    for (Py_ssize_t e = 0; e < n_eval; e++) {
        Py_ssize_t q = order[e], qi = rq_map[q];
        PyObject *name = PyUnicode_FromStringAndSize((const char *)rq.str[q].p, rq.str[q].n);
        if (name == NULL) {
            Py_DECREF(ids);
            Py_DECREF(values);
            goto fail;
        }
        PyList_SetItem(ids, e, name);
        const Row *r0 = grouped + qstart[q];
        Py_ssize_t n = qstart[q + 1] - qstart[q];
        for (Py_ssize_t s = 0; s < n_specs; s++) {
            double v = measure(&specs[s], r0, n, ideal + ideal_start[qi], num_rel[qi], num_rel[qi], div);
            PyObject *f = PyFloat_FromDouble(v);
            if (f == NULL) {
                Py_DECREF(ids);
                Py_DECREF(values);
                goto fail;
            }
            PyList_SetItem(values, e * n_specs + s, f);
        }
    }
    PyObject *tag_obj = PyBytes_FromStringAndSize((const char *)tag.p, tag.n);
    if (tag_obj == NULL) {
        Py_DECREF(ids);
        Py_DECREF(values);
        goto fail;
    }
    result = Py_BuildValue("(NNNnnn)", tag_obj, ids, values, rq.n - both, run_only_rows, qq.n - both);
    goto done;

decline:
    result = Py_None;
    Py_INCREF(result);
    goto done;
nomem:
    PyErr_NoMemory();
fail:
    result = NULL;
done:
    names_free(&qq);
    names_free(&rq);
    stamped_free(&judged_of);
    stamped_free(&retrieved);
    PyMem_Free(judgements);
    PyMem_Free(jorder);
    PyMem_Free(jstart);
    PyMem_Free(ideal);
    PyMem_Free(ideal_start);
    PyMem_Free(num_rel);
    PyMem_Free(rows);
    PyMem_Free(grouped);
    PyMem_Free(qstart);
    PyMem_Free(rq_map);
    PyMem_Free(order);
    PyMem_Free(div);
    return result;
}

static PyMethodDef methods[] = {
    {"evaluate", evaluate, METH_VARARGS,
     "evaluate(qrels, run, specs) -> None or (tag, query_ids, values, run_only_queries, "
     "run_only_rows, qrels_only_queries)"},
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
