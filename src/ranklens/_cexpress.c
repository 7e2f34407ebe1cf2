/* The express evaluation (issue 12): qrels and one run, as TREC text or as the Arrow columns of Parquet
 * files, to the per-query values of the common measures (nDCG, DCG, AP, P, RR and R, each with or without
 * a cutoff, default parameters; and trec_eval's default and all_trec sets: trec_measure, issue 26), in one
 * compiled pass. It exists for the collections most people have
 * (S-sized: a few thousand queries), where importing numpy and pyarrow costs more than the evaluation
 * itself, and for Parquet runs, where it leaves pyarrow only the decoding.
 *
 * This is an accelerator, not a second engine with its own rules: it takes only inputs whose reading and
 * evaluation are beyond doubt, and for anything else it returns None so that the caller runs the general
 * path (ranklens.evaluation), which is the reference and the only producer of errors and of every note
 * but the two alignment notes counted here. It declines, among others: a qrels line that is not exactly
 * four fields with a decimal label of at most nine digits, a qrels comment, a judgement given twice, a
 * negative label; a run line of fewer than six fields or more than six, a score outside the strict grammar
 * of _trec_lex.h (nan included), a document retrieved twice for one query; a CR that does not end its line
 * (just before the LF); and a run that shares no query
 * with the qrels; and any text that is not plain ASCII or holds a NUL or a byte in 0x1c..0x1f (whitespace
 * to str.split() but not to bytes.split()), byte-order marks included; in Arrow columns, an id that is
 * empty or holds a byte outside printable ASCII, a score that is not finite, a label that is no integer.
 *
 * Arithmetic is the engine's, operation for operation, so values are bit-identical: rows sorted by score
 * descending and ties by document id descending (bytewise, trec_eval's strcmp); DCG sums gain / log2(rank
 * + 1) in rank order (log2 of the C library, as the engine's discount table); the ideal sums the sorted
 * positive labels the same way; AP sums (relevant so far) / rank over the relevant rows, then divides by R;
 * P, R and RR are one division each. Means over queries are left to the caller (math.fsum, as the
 * engine's).
 *
 * The qrels come as text (parse_qrels) or as Arrow columns (parse_qrels_columns); runs as blocks of text
 * (evaluate_block) or as Arrow columns, the buffers of a Parquet run's record batches read in place
 * (evaluate_columns, which lets go of the GIL while it evaluates, so the next batches are decoded
 * meanwhile). Each function's comment says what it takes and gives back; specs are (kind, cutoff) with
 * kind 1 nDCG, 2 AP, 3 P, 4 RR, 5 R, 6 DCG and cutoff 0 for none.
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
/* trec_eval's measures (kinds 7 and up): computed by trec_measure, below the faces block */
enum {
    NUMQ = 7, NUMRET, NUMREL, NUMRELRET, RPREC, BPREF, IPREC, INFAP, RPREC_MULT, UTILITY, IPREC_AVG, BING, GAIN_G,
    NDCG_REL, RNDCG, RELATIVE_P, SUCCESS, SET_P, SET_REL_P, SET_AP, SET_F, UNJ, NONREL_JUDGED_RET, TREC_RBP,
    TREC_RBP_RESID, LABEL_AT, LAST_KIND = LABEL_AT
};
#define MAX_SPECS 256

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

/* The hash of an id within this module (its tables only: nothing outside compares these hashes): the
 * bytes read eight at a time (ids are short: one or two words), every word mixed in, then the murmur3
 * finaliser. Equal ids have equal hashes; a collision costs a comparison, never a wrong match. Measured
 * on M's 10M document ids: a third of the per-row time of the byte-at-a-time FNV-1a of id_hash. */
static inline uint64_t load64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load32(const unsigned char *p) {
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

static inline uint64_t fast_hash(const unsigned char *s, Py_ssize_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n, w;
    if (n >= 8) {
        Py_ssize_t i = 0;
        for (; i + 8 <= n; i += 8) h = (h ^ load64(s + i)) * 0xff51afd7ed558ccdULL, h ^= h >> 29;
        if (i == n) return fmix64(h);
        w = load64(s + n - 8); /* (the last word, overlapping the one before) */
    } else if (n >= 4) {
        w = load32(s) | (load32(s + n - 4) << 32);
    } else if (n > 0) {
        w = (uint64_t)s[0] | ((uint64_t)s[n / 2] << 8) | ((uint64_t)s[n - 1] << 16);
    } else {
        w = 0;
    }
    return fmix64((h ^ w) * 0xc4ceb93fe53ec53ULL);
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
    s->slot = (int32_t *)malloc(size * sizeof(int32_t));
    if (s->slot == NULL) return -1;
    memset(s->slot, 0xff, size * sizeof(int32_t)); /* -1: empty */
    s->mask = size - 1;
    return 0;
}

static void set_free(Set *s) {
    free(s->slot);
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
    t->slot = (int32_t *)malloc(size * sizeof(int32_t));
    t->stamp = (int32_t *)malloc(size * sizeof(int32_t));
    if (t->slot == NULL || t->stamp == NULL) return -1;
    memset(t->stamp, 0xff, size * sizeof(int32_t));
    t->mask = size - 1;
    return 0;
}

static void stamped_free(Stamped *t) {
    free(t->slot);
    free(t->stamp);
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
    t->str = (Str *)malloc((size_t)t->cap * sizeof(Str));
    t->hash = (uint64_t *)malloc((size_t)t->cap * sizeof(uint64_t));
    if (t->str == NULL || t->hash == NULL) return -1;
    return set_init(&t->set, expected);
}

static void names_free(Names *t) {
    free(t->str);
    free(t->hash);
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
    uint64_t h = fast_hash(s.p, s.n);
    size_t j = (size_t)h & t->set.mask;
    while (t->set.slot[j] >= 0) {
        int32_t i = t->set.slot[j];
        if (t->hash[i] == h && str_eq(t->str[i], s)) return i;
        j = (j + 1) & t->set.mask;
    }
    if (!insert) return -1;
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap * 2;
        Str *str = (Str *)realloc(t->str, (size_t)cap * sizeof(Str));
        if (str == NULL) return -2;
        t->str = str;
        uint64_t *hash = (uint64_t *)realloc(t->hash, (size_t)cap * sizeof(uint64_t));
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
    uint64_t doc_hash; /* fast_hash of the document id */
    int32_t doc_len;
    int32_t label;
    int32_t query; /* the qrels query */
} Judgement;

typedef struct {
    double score;
    const unsigned char *doc;
    uint64_t doc_hash; /* fast_hash of the document id */
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
    double param;      /* the one numeric parameter of a trec_eval kind (IPrec's recall, RBP's p …); else 0 */
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
    int busy;              /* an evaluation runs (without the GIL) on judged_of and the scratch */
    Row *scratch;          /* the rows of the last block, kept for the next (fresh pages cost as much as
                            * the evaluation: the kernel clears every one) */
    Py_ssize_t scratch_cap;
} Qrels;

static void qrels_free(Qrels *qr) {
    if (qr == NULL) return;
    Py_XDECREF(qr->text);
    names_free(&qr->queries);
    free(qr->judgements);
    free(qr->jorder);
    free(qr->jstart);
    free(qr->ideal);
    free(qr->ideal_start);
    free(qr->num_rel);
    stamped_free(&qr->judged_of);
    free(qr->scratch);
    free(qr);
}

static void qrels_capsule_free(PyObject *capsule) { qrels_free((Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels")); }

/* The judgements' index, once qr->judgements[0, n_j) hold them: query by query, no document twice within
 * a query, and each query's positive labels sorted descending with its R. 0, 1 to decline, -1 on memory
 * failure. */
static int qrels_index(Qrels *qr, Py_ssize_t n_j) {
    if (n_j == 0 || n_j > INT32_MAX / 4) return 1;
    qr->n_judgements = n_j;
    Py_ssize_t nq = qr->queries.n;
    /* the judgements query by query (a counting sort), then no document twice within a query */
    qr->jstart = (Py_ssize_t *)calloc((size_t)nq + 1, sizeof(Py_ssize_t));
    qr->jorder = (int32_t *)malloc((size_t)n_j * sizeof(int32_t));
    Py_ssize_t *fill = (Py_ssize_t *)malloc(((size_t)nq + 1) * sizeof(Py_ssize_t));
    if (!qr->jstart || !qr->jorder || !fill) {
        free(fill);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n_j; i++) qr->jstart[qr->judgements[i].query + 1]++;
    for (Py_ssize_t q = 0; q < nq; q++) qr->jstart[q + 1] += qr->jstart[q];
    memcpy(fill, qr->jstart, ((size_t)nq + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n_j; i++) qr->jorder[fill[qr->judgements[i].query]++] = (int32_t)i;
    for (Py_ssize_t q = 0; q < nq; q++)
        if (qr->jstart[q + 1] - qr->jstart[q] > qr->most_judged) qr->most_judged = qr->jstart[q + 1] - qr->jstart[q];
    if (stamped_init(&qr->judged_of, qr->most_judged) < 0) {
        free(fill);
        return -1;
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
                    free(fill);
                    return 1; /* a judgement given twice */
                }
                j = (j + 1) & t->mask;
            }
            t->stamp[j] = qr->stamp;
            t->slot[j] = qr->jorder[k];
        }
    /* every query's positive labels, sorted descending, and its R */
    qr->ideal_start = (Py_ssize_t *)calloc((size_t)nq + 1, sizeof(Py_ssize_t));
    qr->num_rel = (Py_ssize_t *)calloc((size_t)nq + 1, sizeof(Py_ssize_t));
    qr->ideal = (int32_t *)malloc((size_t)n_j * sizeof(int32_t));
    if (!qr->ideal_start || !qr->num_rel || !qr->ideal) {
        free(fill);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n_j; i++)
        if (qr->judgements[i].label > 0) qr->num_rel[qr->judgements[i].query]++;
    for (Py_ssize_t q = 0; q < nq; q++) qr->ideal_start[q + 1] = qr->ideal_start[q] + qr->num_rel[q];
    memcpy(fill, qr->ideal_start, ((size_t)nq + 1) * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n_j; i++)
        if (qr->judgements[i].label > 0) qr->ideal[fill[qr->judgements[i].query]++] = qr->judgements[i].label;
    free(fill);
    for (Py_ssize_t q = 0; q < nq; q++)
        qsort(qr->ideal + qr->ideal_start[q], (size_t)qr->num_rel[q], sizeof(int32_t), label_desc);
    return 0;
}

/* The query of the judgement before (its id, its index among qr->queries): judgements come query by query. */
typedef struct {
    Str q;
    Py_ssize_t qi;
} LastQuery;

/* Append the judgement (q, d, label) to qr->judgements[*n_j] (grown to *cap_j), its query interned:
 * 0, or -1 on memory failure. */
static int add_judgement(Qrels *qr, Py_ssize_t *n_j, Py_ssize_t *cap_j, Str q, Str d, int32_t label, LastQuery *last) {
    if (!str_eq(q, last->q)) {
        last->qi = names_find(&qr->queries, q, 1);
        if (last->qi == -2) return -1;
        last->q = q;
    }
    if (*n_j == *cap_j) {
        *cap_j *= 2;
        Judgement *a = (Judgement *)realloc(qr->judgements, (size_t)*cap_j * sizeof(Judgement));
        if (a == NULL) return -1;
        qr->judgements = a;
    }
    Judgement *jg = qr->judgements + (*n_j)++;
    jg->doc = d.p;
    jg->doc_len = (int32_t)d.n;
    jg->doc_hash = fast_hash(d.p, d.n);
    jg->label = label;
    jg->query = (int32_t)last->qi;
    return 0;
}

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
    Qrels *qr = (Qrels *)calloc(1, sizeof(Qrels));
    if (qr == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_INCREF(text_obj);
    qr->text = text_obj;
    Py_ssize_t n_j = 0, cap_j = end / 16 + 16, pos = 0;
    LastQuery last = {{NULL, -1}, -1};
    if (names_init(&qr->queries, 1024) < 0) goto nomem;
    qr->judgements = (Judgement *)malloc((size_t)cap_j * sizeof(Judgement));
    if (!qr->judgements) goto nomem;
    while (pos < end) {
        Py_ssize_t starts[4], lens[4];
        int more;
        int fields = line_fields(u, &pos, end, size, starts, lens, 4, &more);
        if (fields < 0) goto decline; /* a CR that ends no line */
        if (fields == 0) continue;
        if (fields != 4 || more || u[starts[0]] == '#') goto decline;
        int32_t label;
        if (parse_label(u + starts[3], lens[3], &label) < 0 || label < 0 || lens[2] > INT32_MAX) goto decline;
        Str q = {u + starts[0], lens[0]}, d = {u + starts[2], lens[2]};
        if (add_judgement(qr, &n_j, &cap_j, q, d, label, &last) < 0) goto nomem;
    }
    switch (qrels_index(qr, n_j)) {
    case 0: return qr;
    case 1: goto decline;
    default: goto nomem;
    }

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

static int needs_cutoff(int kind); /* (the trec_eval kinds, below) */

static int read_specs(PyObject *specs_obj, Spec *specs, Py_ssize_t *n_specs) {
    *n_specs = PyTuple_Size(specs_obj);
    if (*n_specs < 1 || *n_specs > MAX_SPECS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "between 1 and 256 measures");
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n_specs; i++) {
        PyObject *item = PyTuple_GetItem(specs_obj, i);
        int kind;
        Py_ssize_t cutoff;
        double param = 0.0;
        if (item == NULL || !PyArg_ParseTuple(item, "in|d", &kind, &cutoff, &param)) return -1;
        if (kind < NDCG || kind > LAST_KIND || cutoff < 0 || (cutoff == 0 && needs_cutoff(kind))) {
            PyErr_SetString(PyExc_ValueError, "bad measure spec");
            return -1;
        }
        specs[i].kind = kind;
        specs[i].cutoff = cutoff;
        specs[i].param = param;
    }
    return 0;
}

/* Rows collected from a block (text or Arrow columns), query after query, before evaluation. */
typedef struct {
    Names rq;            /* the run queries, in file order */
    Row *rows;
    Py_ssize_t n_rows, cap_rows;
    Py_ssize_t *first_of; /* where each query's first row starts (a byte offset or a row number) */
    Py_ssize_t cap_q;
    Str last_q;
    Py_ssize_t last_qi;
    int in_order; /* the rows come query after query (as run files are written) */
} Rows;

static int rows_init(Rows *c, Py_ssize_t expected_rows, Qrels *qr) {
    memset(c, 0, sizeof(Rows));
    c->cap_q = 1024;
    c->last_q.n = -1;
    c->last_qi = -1;
    c->in_order = 1;
    c->rows = qr->scratch; /* (the last block's rows array, given back by rows_free) */
    c->cap_rows = qr->scratch_cap;
    qr->scratch = NULL;
    qr->scratch_cap = 0;
    if (c->cap_rows < expected_rows + 16) {
        free(c->rows);
        c->cap_rows = expected_rows + 16;
        c->rows = (Row *)malloc((size_t)c->cap_rows * sizeof(Row));
    }
    c->first_of = (Py_ssize_t *)malloc((size_t)c->cap_q * sizeof(Py_ssize_t));
    if (c->rows == NULL || c->first_of == NULL || names_init(&c->rq, 1024) < 0) return -1;
    return 0;
}

/* free what rows_init took, the rows array given back to qr for the next block */
static void rows_free(Rows *c, Qrels *qr) {
    names_free(&c->rq);
    free(c->first_of);
    free(qr->scratch);
    qr->scratch = c->rows;
    qr->scratch_cap = c->rows != NULL ? c->cap_rows : 0;
    c->rows = NULL;
    c->first_of = NULL;
}

/* Append one row of query q (where: the row's position, kept for the query's first row); 0, 1 to
 * decline (a query that comes back after others outside the final block), -1 on memory failure. */
static int rows_add(Rows *c, Str q, Str doc, double score, Py_ssize_t where, int final) {
    if (!str_eq(q, c->last_q)) {
        Py_ssize_t before = c->rq.n;
        c->last_qi = names_find(&c->rq, q, 1);
        if (c->last_qi == -2) return -1;
        if (c->last_qi < before) {
            if (!final) return 1; /* not grouped: the general path reads it whole */
            c->in_order = 0;
        } else {
            if (c->rq.n > c->cap_q) {
                c->cap_q *= 2;
                Py_ssize_t *a = (Py_ssize_t *)realloc(c->first_of, (size_t)c->cap_q * sizeof(Py_ssize_t));
                if (a == NULL) return -1;
                c->first_of = a;
            }
            c->first_of[c->last_qi] = where;
        }
        c->last_q = q;
    }
    if (c->n_rows == c->cap_rows) {
        c->cap_rows *= 2;
        Row *a = (Row *)realloc(c->rows, (size_t)c->cap_rows * sizeof(Row));
        if (a == NULL) return -1;
        c->rows = a;
    }
    if (doc.n > INT32_MAX || c->n_rows >= INT32_MAX / 4) return 1;
    Row *row = c->rows + c->n_rows++;
    row->score = score;
    row->doc = doc.p;
    row->doc_len = (int32_t)doc.n;
    row->doc_hash = fast_hash(doc.p, doc.n);
    row->query = (int32_t)c->last_qi;
    row->label = -1;
    return 0;
}

/* What evaluate_rows computes of the collected rows, for rows_result. */
typedef struct {
    Py_ssize_t n_q, n_rows, both, run_only_rows, consumed;
    Py_ssize_t *rq_map; /* run query → qrels query (-1: not in the qrels) */
    double *values;     /* the evaluated queries' values, query after query, one per spec */
} Evaluated;

static void evaluated_free(Evaluated *e) {
    free(e->rq_map);
    free(e->values);
}

static void top_rows(Row *g, Py_ssize_t n, Py_ssize_t k); /* (defined with the in-memory inputs, below) */
static double trec_measure(const Spec *s, const Row *rows, Py_ssize_t n, const Qrels *qr, Py_ssize_t qi,
                           const double *div); /* (the trec_eval kinds, below) */

/* The values of the collected rows, into *e (no Python object touched: called without the GIL). Unless
 * final, the last query waits for the rest of its rows: consumed is its first_of (0 and nothing evaluated
 * when the block holds one query only); with final, consumed is end. 0, 1 to decline (a document
 * retrieved twice for one query), -1 on memory failure. */
static int evaluate_rows(Qrels *qr, const Spec *specs, Py_ssize_t n_specs, Rows *c, int final, Py_ssize_t end,
                         Evaluated *e) {
    int status = -1;
    Stamped retrieved = {0};
    Row *grouped = NULL;
    Py_ssize_t *qstart = NULL;
    double *div = NULL;
    Py_ssize_t n_q = c->rq.n, n_rows = c->n_rows;
    memset(e, 0, sizeof(Evaluated));
    e->consumed = end;
    if (!final) { /* the last query waits for the rest of its rows */
        if (n_q <= 1) {
            e->consumed = 0;
            n_q = 0;
            n_rows = 0;
        } else {
            n_q--;
            e->consumed = c->first_of[n_q];
            while (n_rows > 0 && c->rows[n_rows - 1].query == n_q) n_rows--;
        }
    }
    e->n_q = n_q;
    e->n_rows = n_rows;

    /* run queries → qrels queries */
    Py_ssize_t *rq_map = e->rq_map = (Py_ssize_t *)malloc(((size_t)n_q + 1) * sizeof(Py_ssize_t));
    qstart = (Py_ssize_t *)calloc((size_t)n_q + 1, sizeof(Py_ssize_t));
    if (rq_map == NULL || qstart == NULL) goto done;
    for (Py_ssize_t q = 0; q < n_q; q++) {
        rq_map[q] = names_find(&qr->queries, c->rq.str[q], 0);
        e->both += rq_map[q] >= 0;
    }

    /* group the rows by run query (a counting sort that keeps the file order; nothing to move when the
     * file is written query after query) */
    Row *rows = c->rows;
    for (Py_ssize_t i = 0; i < n_rows; i++) qstart[rows[i].query + 1]++;
    for (Py_ssize_t q = 0; q < n_q; q++) qstart[q + 1] += qstart[q];
    if (!c->in_order) {
        grouped = (Row *)malloc(((size_t)n_rows + 1) * sizeof(Row));
        Py_ssize_t *fill = (Py_ssize_t *)malloc(((size_t)n_q + 1) * sizeof(Py_ssize_t));
        if (grouped == NULL || fill == NULL) {
            free(fill);
            goto done;
        }
        memcpy(fill, qstart, ((size_t)n_q + 1) * sizeof(Py_ssize_t));
        for (Py_ssize_t i = 0; i < n_rows; i++) grouped[fill[rows[i].query]++] = rows[i];
        free(fill);
        rows = grouped;
    }

    /* per query: no document twice (a set sized to the longest query, so it stays in cache), the ranking
     * and the labels of the queries in both; labels only as deep as the deepest cutoff when every measure
     * has one (no measure reads a row below it) */
    Py_ssize_t longest = 0, depth = 0;
    for (Py_ssize_t s = 0; s < n_specs; s++) {
        if (specs[s].cutoff == 0) {
            depth = 0;
            break;
        }
        if (specs[s].cutoff > depth) depth = specs[s].cutoff;
    }
    for (Py_ssize_t q = 0; q < n_q; q++)
        if (qstart[q + 1] - qstart[q] > longest) longest = qstart[q + 1] - qstart[q];
    if (stamped_init(&retrieved, longest) < 0) goto done;
    Stamped *jt = &qr->judged_of;
    for (Py_ssize_t q = 0; q < n_q; q++) {
        Row *g = rows + qstart[q];
        Py_ssize_t n = qstart[q + 1] - qstart[q], qi = rq_map[q];
        for (Py_ssize_t i = 0; i < n; i++) {
            size_t j = (size_t)g[i].doc_hash & retrieved.mask;
            while (retrieved.stamp[j] == (int32_t)q) {
                const Row *o = g + retrieved.slot[j];
                Str x = {o->doc, o->doc_len}, y = {g[i].doc, g[i].doc_len};
                if (o->doc_hash == g[i].doc_hash && str_eq(x, y)) {
                    status = 1;
                    goto done;
                }
                j = (j + 1) & retrieved.mask;
            }
            retrieved.stamp[j] = (int32_t)q;
            retrieved.slot[j] = (int32_t)i;
        }
        if (qi < 0) {
            e->run_only_rows += n;
            continue;
        }
        /* the ranking (nothing to sort when the file is in rank order already), then the query's
         * judgements in the small table and the label of every row a measure reads from it */
        Py_ssize_t i = 1;
        while (i < n && row_order(g + i - 1, g + i) < 0) i++;
        if (i < n && depth > 0 && depth < n)
            top_rows(g, n, depth); /* (no measure reads below depth: the first depth rows in order suffice) */
        else if (i < n)
            qsort(g, (size_t)n, sizeof(Row), row_order);
        int32_t stamp = qr->stamp++;
        for (Py_ssize_t k = qr->jstart[qi]; k < qr->jstart[qi + 1]; k++) {
            size_t j = (size_t)qr->judgements[qr->jorder[k]].doc_hash & jt->mask;
            while (jt->stamp[j] == stamp) j = (j + 1) & jt->mask;
            jt->stamp[j] = stamp;
            jt->slot[j] = qr->jorder[k];
        }
        Py_ssize_t labelled = depth > 0 && depth < n ? depth : n;
        for (Py_ssize_t r = 0; r < labelled; r++) {
            size_t j = (size_t)g[r].doc_hash & jt->mask;
            while (jt->stamp[j] == stamp) {
                const Judgement *o = qr->judgements + jt->slot[j];
                Str x = {o->doc, o->doc_len}, y = {g[r].doc, g[r].doc_len};
                if (o->doc_hash == g[r].doc_hash && str_eq(x, y)) {
                    g[r].label = o->label;
                    break;
                }
                j = (j + 1) & jt->mask;
            }
        }
        if (qr->num_rel[qi] > longest) longest = qr->num_rel[qi];
    }
    div = (double *)malloc(((size_t)longest + 1) * sizeof(double));
    e->values = (double *)malloc(((size_t)e->both * (size_t)n_specs + 1) * sizeof(double));
    if (div == NULL || e->values == NULL) goto done;
    for (Py_ssize_t r = 0; r <= longest; r++) div[r] = log2((double)r + 2.0);
    for (Py_ssize_t q = 0, k = 0; q < n_q; q++) {
        Py_ssize_t qi = rq_map[q];
        if (qi < 0) continue;
        const Row *r0 = rows + qstart[q];
        Py_ssize_t n = qstart[q + 1] - qstart[q];
        for (Py_ssize_t s = 0; s < n_specs; s++)
            e->values[k++] = specs[s].kind >= NUMQ ? trec_measure(&specs[s], r0, n, qr, qi, div)
                                                   : measure(&specs[s], r0, n, qr->ideal + qr->ideal_start[qi], qr->num_rel[qi], div);
    }
    status = 0;
done:
    stamped_free(&retrieved);
    free(grouped);
    free(qstart);
    free(div);
    return status;
}

/* The result tuple of evaluate_block from what evaluate_rows computed (with the GIL). */
static PyObject *rows_result(const Rows *c, const Evaluated *e, Py_ssize_t n_specs, Str tag) {
    PyObject *run_queries = PyList_New(e->n_q), *evaluated = PyList_New(e->both),
             *values = PyList_New(e->both * n_specs);
    if (run_queries == NULL || evaluated == NULL || values == NULL) goto fail;
    for (Py_ssize_t q = 0, k = 0; q < e->n_q; q++) {
        PyObject *name = PyUnicode_FromStringAndSize((const char *)c->rq.str[q].p, c->rq.str[q].n);
        if (name == NULL) goto fail;
        PyList_SetItem(run_queries, q, name);
        if (e->rq_map[q] < 0) continue;
        Py_INCREF(name);
        PyList_SetItem(evaluated, k, name);
        for (Py_ssize_t s = 0; s < n_specs; s++) {
            PyObject *f = PyFloat_FromDouble(e->values[k * n_specs + s]);
            if (f == NULL) goto fail;
            PyList_SetItem(values, k * n_specs + s, f);
        }
        k++;
    }
    PyObject *tag_obj;
    if (tag.p != NULL) {
        tag_obj = PyBytes_FromStringAndSize((const char *)tag.p, tag.n);
        if (tag_obj == NULL) goto fail;
    } else {
        tag_obj = Py_None;
        Py_INCREF(tag_obj);
    }
    return Py_BuildValue("(NNNNnnnO)", tag_obj, run_queries, evaluated, values, e->run_only_rows, e->consumed,
                         e->n_rows, c->in_order ? Py_True : Py_False);
fail:
    Py_XDECREF(run_queries);
    Py_XDECREF(evaluated);
    Py_XDECREF(values);
    return NULL;
}

/* What a block gives back for the status of its evaluation: rows_result (0), None (declined, 1), or a
 * memory error (-1); *e freed. */
static PyObject *outcome(int status, const Rows *c, Evaluated *e, Py_ssize_t n_specs, Str tag) {
    PyObject *result = status == 0 ? rows_result(c, e, n_specs, tag)
                       : status > 0 ? (Py_INCREF(Py_None), Py_None)
                                    : PyErr_NoMemory();
    evaluated_free(e);
    return result;
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
    if (qr->busy) {
        PyErr_SetString(PyExc_RuntimeError, "these qrels are being evaluated in another thread");
        return NULL;
    }
    Spec specs[MAX_SPECS];
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
    Rows c;
    if (rows_init(&c, rend / 32, qr) < 0) goto nomem;
    Str tag = {NULL, 0};
    Py_ssize_t pos = 0;
    while (pos < rend) {
        Py_ssize_t line_start = pos, starts[6], lens[6];
        int more;
        int fields = line_fields(ru, &pos, rend, rsize, starts, lens, 6, &more);
        if (fields < 0) goto decline; /* a CR that ends no line */
        if (fields == 0 || ru[starts[0]] == '#') continue;
        if (fields != 6 || more) goto decline;
        double score;
        if (parse_score(rdata + starts[4], lens[4], &score) < 0) goto decline;
        Str q = {ru + starts[0], lens[0]}, doc = {ru + starts[2], lens[2]};
        int added = rows_add(&c, q, doc, score, line_start, final);
        if (added < 0) goto nomem;
        if (added > 0) goto decline;
        if (tag.p == NULL) {
            tag.p = ru + starts[5];
            tag.n = lens[5];
        }
    }
    Evaluated e;
    result = outcome(evaluate_rows(qr, specs, n_specs, &c, final, rend, &e), &c, &e, n_specs, tag);
    goto done;
decline:
    result = Py_None;
    Py_INCREF(result);
    goto done;
nomem:
    PyErr_NoMemory();
done:
    rows_free(&c, qr);
    return result;
}

/* ------------------------------------------------------------------------------------- Arrow columns */

/* A string column of an Arrow array: offsets (int32 or int64, wide) from element first, and the data; or
 * a dictionary array (indices not NULL: int32, from the row's element): its n_values strings so. */
typedef struct {
    const void *offsets;
    const unsigned char *data;
    int wide;
    Py_ssize_t first;
    const int32_t *indices;
    Py_ssize_t n_values;
} StrColumn;

static int str_column(PyObject *item, Py_ssize_t at, StrColumn *out) {
    PyObject *off_addr = PyTuple_GetItem(item, at), *data_addr = PyTuple_GetItem(item, at + 1),
             *idx_addr = PyTuple_GetItem(item, at + 4);
    if (off_addr == NULL || data_addr == NULL || idx_addr == NULL) return -1;
    out->offsets = PyLong_AsVoidPtr(off_addr);
    if (out->offsets == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "no offsets");
        return -1;
    }
    out->data = (const unsigned char *)PyLong_AsVoidPtr(data_addr);
    if (out->data == NULL && PyErr_Occurred()) return -1;
    out->indices = (const int32_t *)PyLong_AsVoidPtr(idx_addr);
    if (out->indices == NULL && PyErr_Occurred()) return -1;
    out->wide = (int)PyLong_AsLong(PyTuple_GetItem(item, at + 2));
    out->first = PyLong_AsSsize_t(PyTuple_GetItem(item, at + 3));
    out->n_values = PyLong_AsSsize_t(PyTuple_GetItem(item, at + 5));
    if (PyErr_Occurred()) return -1;
    if (out->first < 0 || out->n_values < 0) {
        PyErr_SetString(PyExc_ValueError, "bad string column");
        return -1;
    }
    return 0;
}

static inline Py_ssize_t str_offset(const StrColumn *c, Py_ssize_t i) {
    return c->wide ? (Py_ssize_t)((const int64_t *)c->offsets)[c->first + i]
                   : (Py_ssize_t)((const int32_t *)c->offsets)[c->first + i];
}

static inline Str value_at(const StrColumn *c, Py_ssize_t i) {
    Py_ssize_t a = str_offset(c, i);
    Str s = {c->data + a, str_offset(c, i + 1) - a};
    return s;
}

/* the id of row i */
static inline Str str_at(const StrColumn *c, Py_ssize_t i) {
    return value_at(c, c->indices != NULL ? (Py_ssize_t)c->indices[i] : i);
}

/* Whether strings [0, n) hold ids the express path reads beyond doubt: none empty, every byte printable
 * ASCII (no whitespace, so no reading of the text formats could split or trim them differently). */
static int plain_strings(const StrColumn *c, Py_ssize_t n) {
    Py_ssize_t a = str_offset(c, 0), b = str_offset(c, n);
    if (b < a || (b > a && c->data == NULL)) return 0;
    unsigned bad = 0;
    for (Py_ssize_t i = a; i < b; i++) {
        unsigned char x = c->data[i];
        bad |= (unsigned)((unsigned char)(x - 0x21) > 0x5d); /* outside 0x21..0x7e */
    }
    if (bad) return 0;
    Py_ssize_t prev = a;
    for (Py_ssize_t i = 1; i <= n; i++) {
        Py_ssize_t o = str_offset(c, i);
        if (o <= prev) return 0; /* (an empty id, or offsets out of order) */
        prev = o;
    }
    return 1;
}

/* Whether the ids of rows [0, n) are plain_strings: a dictionary's values all (and every index one of
 * them), else the rows' own. */
static int plain_ids(const StrColumn *c, Py_ssize_t n) {
    if (c->indices == NULL) return plain_strings(c, n);
    unsigned bad = 0;
    for (Py_ssize_t i = 0; i < n; i++) bad |= (unsigned)(c->indices[i] < 0) | (unsigned)(c->indices[i] >= c->n_values);
    return bad == 0 && (n == 0 || plain_strings(c, c->n_values));
}

/* the kinds of number column: a score or a relevance label */
enum { F64 = 0, F32 = 1, I32 = 2, I64 = 3, I8 = 4, I16 = 5, U8 = 6, U16 = 7, U32 = 8 };

static inline double number_at(const void *p, int kind, Py_ssize_t i) {
    switch (kind) {
    case F64: return ((const double *)p)[i];
    case F32: return (double)((const float *)p)[i];
    case I32: return (double)((const int32_t *)p)[i];
    case I64: return (double)((const int64_t *)p)[i];
    case I8: return (double)((const int8_t *)p)[i];
    case I16: return (double)((const int16_t *)p)[i];
    case U8: return (double)((const uint8_t *)p)[i];
    case U16: return (double)((const uint16_t *)p)[i];
    case U32: return (double)((const uint32_t *)p)[i];
    }
    return NAN;
}

/* One segment of rows: the query and the document column, each (offsets, data, wide, first, indices,
 * values: see StrColumn; indices 0 for none), then (values, value kind, value first) and the rows. */
typedef struct {
    StrColumn q, d;
    const void *v;
    int v_kind;
    Py_ssize_t n;
} Segment;

static int read_segment(PyObject *item, Segment *s) {
    if (!PyTuple_Check(item) || PyTuple_Size(item) != 16) {
        PyErr_SetString(PyExc_ValueError, "a segment is a tuple of 16");
        return -1;
    }
    if (str_column(item, 0, &s->q) < 0 || str_column(item, 6, &s->d) < 0) return -1;
    const char *base = (const char *)PyLong_AsVoidPtr(PyTuple_GetItem(item, 12));
    s->v_kind = (int)PyLong_AsLong(PyTuple_GetItem(item, 13));
    Py_ssize_t vf = PyLong_AsSsize_t(PyTuple_GetItem(item, 14));
    s->n = PyLong_AsSsize_t(PyTuple_GetItem(item, 15));
    if (PyErr_Occurred()) return -1;
    if (base == NULL || s->n < 0 || s->v_kind < F64 || s->v_kind > U32 || vf < 0) {
        PyErr_SetString(PyExc_ValueError, "bad segment");
        return -1;
    }
    static const int width[] = {8, 4, 4, 8, 1, 2, 1, 2, 4};
    s->v = base + vf * width[s->v_kind];
    return 0;
}

/* The segments of a tuple (see Segment), their number and their rows, or NULL with an exception. */
static Segment *read_segments(PyObject *tuple, Py_ssize_t *n_seg, Py_ssize_t *total) {
    *n_seg = PyTuple_Size(tuple);
    *total = 0;
    Segment *segs = (Segment *)malloc(((size_t)*n_seg + 1) * sizeof(Segment));
    if (segs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < *n_seg; k++) {
        if (read_segment(PyTuple_GetItem(tuple, k), segs + k) < 0) {
            free(segs);
            return NULL;
        }
        *total += segs[k].n;
    }
    return segs;
}

/* The rows of the segments, one after another, into *c (without the GIL): 0, 1 to decline, -1 on memory
 * failure. */
static int collect_columns(Qrels *qr, const Segment *segs, Py_ssize_t n_seg, Py_ssize_t total, int final, Rows *c) {
    if (rows_init(c, total, qr) < 0) return -1;
    Py_ssize_t where = 0;
    for (Py_ssize_t k = 0; k < n_seg; k++) {
        const Segment *s = segs + k;
        if (s->n == 0) continue;
        if (!plain_ids(&s->q, s->n) || !plain_ids(&s->d, s->n)) return 1;
        for (Py_ssize_t i = 0; i < s->n; i++, where++) {
            double score = number_at(s->v, s->v_kind, i);
            if (!isfinite(score)) return 1;
            int added = rows_add(c, str_at(&s->q, i), str_at(&s->d, i), score, where, final);
            if (added != 0) return added;
        }
    }
    return 0;
}

/* evaluate_columns(qrels, segments, specs, final) -> None | the tuple of evaluate_block
 *
 * As evaluate_block, for rows given as Arrow columns (query id, document id, score) in segments, read one
 * after another as one block (the caller keeps the arrays alive and checks there is no null); consumed
 * counts rows over all the segments. Declined as well: an id that is empty or holds a byte outside
 * printable ASCII (whitespace included), and a score that is not finite. tag is None. */
static PyObject *evaluate_columns(PyObject *self, PyObject *args) {
    PyObject *capsule, *segments_obj, *specs_obj;
    int final;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO!Op", &capsule, &PyTuple_Type, &segments_obj, &specs_obj, &final)) return NULL;
    Qrels *qr = (Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels");
    if (qr == NULL) return NULL;
    Spec specs[MAX_SPECS];
    Py_ssize_t n_specs;
    if (read_specs(specs_obj, specs, &n_specs) < 0) return NULL;
    Py_ssize_t n_seg, total;
    Segment *segs = read_segments(segments_obj, &n_seg, &total);
    if (segs == NULL) return NULL;
    if (qr->busy) {
        free(segs);
        PyErr_SetString(PyExc_RuntimeError, "these qrels are being evaluated in another thread");
        return NULL;
    }
    qr->busy = 1;
    Rows c;
    Evaluated e;
    int status;
    memset(&e, 0, sizeof(Evaluated));
    Py_BEGIN_ALLOW_THREADS /* (the caller keeps the arrays alive; nothing here touches a Python object) */
    status = collect_columns(qr, segs, n_seg, total, final, &c);
    if (status == 0) status = evaluate_rows(qr, specs, n_specs, &c, final, total, &e);
    Py_END_ALLOW_THREADS
    qr->busy = 0;
    Str no_tag = {NULL, 0};
    PyObject *result = outcome(status, &c, &e, n_specs, no_tag);
    rows_free(&c, qr);
    free(segs);
    return result;
}

/* parse_qrels_columns(owner, segments) -> None | (qrels, number of queries)
 *
 * The qrels of Arrow columns (query id, document id, relevance label) given as segments of
 * evaluate_columns, the labels integers (the value kinds I32, I64, I8 .. U32); owner holds the arrays
 * (kept while the qrels live). Declined as the text's: an id that is empty or not printable ASCII, a
 * label outside 0 .. 999999999, a judgement given twice. */
static PyObject *parse_qrels_columns(PyObject *self, PyObject *args) {
    PyObject *owner, *segments_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO!", &owner, &PyTuple_Type, &segments_obj)) return NULL;
    Py_ssize_t n_seg, total;
    Segment *segs = read_segments(segments_obj, &n_seg, &total);
    if (segs == NULL) return NULL;
    Qrels *qr = (Qrels *)calloc(1, sizeof(Qrels));
    if (qr == NULL) {
        free(segs);
        return PyErr_NoMemory();
    }
    Py_INCREF(owner);
    qr->text = owner;
    if (total == 0 || total > INT32_MAX / 4) goto decline;
    qr->judgements = (Judgement *)malloc((size_t)total * sizeof(Judgement));
    if (qr->judgements == NULL || names_init(&qr->queries, 1024) < 0) goto nomem;
    LastQuery last = {{NULL, -1}, -1};
    Py_ssize_t n_j = 0, cap_j = total;
    for (Py_ssize_t k = 0; k < n_seg; k++) {
        const Segment *seg = segs + k;
        if (seg->n == 0) continue;
        if (seg->v_kind == F64 || seg->v_kind == F32 || !plain_ids(&seg->q, seg->n) || !plain_ids(&seg->d, seg->n))
            goto decline;
        for (Py_ssize_t i = 0; i < seg->n; i++) {
            double label = number_at(seg->v, seg->v_kind, i);
            if (!(label >= 0.0 && label <= 999999999.0)) goto decline;
            Str q = str_at(&seg->q, i), d = str_at(&seg->d, i);
            if (d.n > INT32_MAX) goto decline;
            if (add_judgement(qr, &n_j, &cap_j, q, d, (int32_t)label, &last) < 0) goto nomem;
        }
    }
    switch (qrels_index(qr, n_j)) {
    case 0: break;
    case 1: goto decline;
    default: goto nomem;
    }
    free(segs);
    PyObject *capsule = PyCapsule_New(qr, "ranklens.qrels", qrels_capsule_free);
    if (capsule == NULL) {
        qrels_free(qr);
        return NULL;
    }
    return Py_BuildValue("(Nn)", capsule, qr->queries.n);
decline:
    free(segs);
    qrels_free(qr);
    Py_RETURN_NONE;
nomem:
    free(segs);
    qrels_free(qr);
    return PyErr_NoMemory();
}

/* ------------------------------------------------------------------- in-memory inputs (Python API) */

/* pytrec_eval's {query id: {document id: value}} dicts, walked where Python keeps them (issue 26: no
 * frame, no list of rows is built). An id is an exact str of printable ASCII (its bytes read in place) or
 * an exact int (written as its decimal string, as the reference's str() writes it, kept alive in a list
 * the qrels or the call own); a run's score an exact float that is finite or an exact int of at most 2^53
 * in magnitude (exact in a double, as numpy converts it); a label an exact int in 0 .. 999999999. Anything
 * else (a subclass, a numpy scalar, a bool, a string value, a float label, a negative label, an id with a
 * space or outside ASCII) declines, and the reference engine reads the dicts and says what is wrong, if
 * anything. The rows then go through the same evaluate_rows as text and Arrow columns. Pandas and polars
 * frames and Arrow tables need nothing here: their Arrow buffers go to evaluate_columns and
 * parse_qrels_columns (ranklens.memory). */

/* The first k of the n rows g in row_order, in order, in g[0, k) (the others after them, in no order): one
 * comparison with the k-th for most rows, instead of a sort of all n. A run given in memory is rarely in
 * rank order (a file usually is, and needs no sort at all); measured on 1M rows of 100 per query with nDCG@10,
 * the sort was two thirds of the compiled pass's time. row_order is a total order (no document twice in a
 * query), so these are exactly the first k rows of the full sort. */
static void top_rows(Row *g, Py_ssize_t n, Py_ssize_t k) {
    for (Py_ssize_t i = 1; i < n; i++) {
        Py_ssize_t top = i < k ? i : k - 1; /* (the last place of the sorted front) */
        if (i >= k) {
            if (row_order(g + i, g + top) >= 0) continue;
            Row evicted = g[top];
            g[top] = g[i];
            g[i] = evicted;
        }
        Row x = g[top];
        Py_ssize_t j = top;
        while (j > 0 && row_order(&x, g + j - 1) < 0) {
            g[j] = g[j - 1];
            j--;
        }
        g[j] = x;
    }
}

/* The bytes of the id object key into *out: 0, 1 to decline, -1 on error; *is_int says it was an int. */
static int dict_id(PyObject *key, PyObject *keep, Str *out, int *is_int) {
    PyObject *s = key;
    *is_int = 0;
    if (PyLong_CheckExact(key)) {
        s = PyObject_Str(key);
        if (s == NULL) return -1;
        int kept = PyList_Append(keep, s);
        Py_DECREF(s); /* (keep holds it) */
        if (kept < 0) return -1;
        *is_int = 1;
    } else if (!PyUnicode_CheckExact(key)) {
        return 1;
    }
    Py_ssize_t n;
    const char *p = PyUnicode_AsUTF8AndSize(s, &n);
    if (p == NULL) { /* (a lone surrogate: the reference says what is wrong) */
        PyErr_Clear();
        return 1;
    }
    if (n == 0 || n > INT32_MAX) return 1;
    unsigned bad = 0;
    for (Py_ssize_t i = 0; i < n; i++) bad |= (unsigned)((unsigned char)((unsigned char)p[i] - 0x21) > 0x5d);
    if (bad) return 1;
    out->p = (const unsigned char *)p;
    out->n = n;
    return 0;
}

/* A run's score: 0, 1 to decline, -1 on error. */
static int dict_score(PyObject *v, double *out) {
    if (PyFloat_CheckExact(v)) {
        *out = PyFloat_AsDouble(v);
        return isfinite(*out) ? 0 : 1;
    }
    if (!PyLong_CheckExact(v)) return 1;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow || x > (1LL << 53) || x < -(1LL << 53)) return 1;
    *out = (double)x;
    return 0;
}

/* A relevance label: 0, 1 to decline, -1 on error. */
static int dict_label(PyObject *v, int32_t *out) {
    if (!PyLong_CheckExact(v)) return 1;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (overflow || x < 0 || x > 999999999) return 1;
    *out = (int32_t)x;
    return 0;
}

/* The entries of a {query: {document: value}} dict (each inner one an exact dict), or -1 to decline. */
static Py_ssize_t dict_rows(PyObject *data) {
    Py_ssize_t pos = 0, total = 0;
    PyObject *key, *inner;
    if (!PyDict_CheckExact(data)) return -1;
    while (PyDict_Next(data, &pos, &key, &inner)) {
        if (!PyDict_CheckExact(inner)) return -1;
        total += PyDict_Size(inner);
    }
    return total;
}

/* parse_qrels_dict(qrels) -> None | (qrels, number of queries)
 *
 * The qrels of a {query id: {document id: label}} dict (see above), as parse_qrels gives them; declined as
 * well: no judgement, a judgement given twice (the ids 1 and "1" are one id). The capsule keeps the dict
 * (and the decimal strings of int ids): the caller must not change it while the qrels live. */
static PyObject *parse_qrels_dict(PyObject *self, PyObject *args) {
    PyObject *data;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &data)) return NULL;
    Py_ssize_t total = dict_rows(data);
    if (total <= 0 || total > INT32_MAX / 4) Py_RETURN_NONE;
    PyObject *keep = PyList_New(0);
    if (keep == NULL) return NULL;
    if (PyList_Append(keep, data) < 0) {
        Py_DECREF(keep);
        return NULL;
    }
    Qrels *qr = (Qrels *)calloc(1, sizeof(Qrels));
    if (qr == NULL) {
        Py_DECREF(keep);
        return PyErr_NoMemory();
    }
    qr->text = keep; /* (the reference is the qrels') */
    qr->judgements = (Judgement *)malloc((size_t)total * sizeof(Judgement));
    if (qr->judgements == NULL || names_init(&qr->queries, 1024) < 0) {
        qrels_free(qr);
        return PyErr_NoMemory();
    }
    LastQuery last = {{NULL, -1}, -1};
    Py_ssize_t n_j = 0, cap_j = total, pos = 0;
    PyObject *qkey, *inner;
    int status = 0, is_int;
    while (status == 0 && PyDict_Next(data, &pos, &qkey, &inner)) {
        Str q, d;
        Py_ssize_t ipos = 0;
        PyObject *dkey, *value;
        if (PyDict_Size(inner) == 0) continue; /* (no judgement: not a query of the qrels, as the reference) */
        status = dict_id(qkey, keep, &q, &is_int);
        while (status == 0 && PyDict_Next(inner, &ipos, &dkey, &value)) {
            int32_t label;
            status = dict_id(dkey, keep, &d, &is_int);
            if (status == 0) status = dict_label(value, &label);
            if (status == 0 && n_j == cap_j) status = 1; /* (the dict changed while read) */
            if (status == 0 && add_judgement(qr, &n_j, &cap_j, q, d, label, &last) < 0) {
                PyErr_NoMemory();
                status = -1;
            }
        }
    }
    if (status == 0) {
        status = qrels_index(qr, n_j);
        if (status < 0) PyErr_NoMemory();
    }
    if (status != 0) {
        qrels_free(qr);
        if (status < 0) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *capsule = PyCapsule_New(qr, "ranklens.qrels", qrels_capsule_free);
    if (capsule == NULL) {
        qrels_free(qr);
        return NULL;
    }
    return Py_BuildValue("(Nn)", capsule, qr->queries.n);
}

/* Evaluate the rows collected so far (whole queries) and append what they give to lists (run queries,
 * evaluated queries, values) and *run_only_rows; remember their queries in seen; start the next block. 0, 1
 * to decline, -1 on memory failure (an exception set), -2 with an exception set. */
static int dict_flush(Qrels *qr, const Spec *specs, Py_ssize_t n_specs, Rows *c, Py_ssize_t block, Names *seen,
                      PyObject **lists, Py_ssize_t *run_only_rows) {
    if (c->n_rows == 0) return 0;
    Evaluated e;
    int status = evaluate_rows(qr, specs, n_specs, c, 1, c->n_rows, &e);
    if (status != 0) {
        evaluated_free(&e);
        if (status < 0) PyErr_NoMemory();
        return status;
    }
    Str no_tag = {NULL, 0};
    PyObject *got = rows_result(c, &e, n_specs, no_tag);
    evaluated_free(&e);
    if (got == NULL) return -2;
    for (int i = 0; i < 3; i++) {
        Py_ssize_t n = PyList_Size(lists[i]);
        if (PyList_SetSlice(lists[i], n, n, PyTuple_GetItem(got, i + 1)) < 0) {
            Py_DECREF(got);
            return -2;
        }
    }
    *run_only_rows += PyLong_AsSsize_t(PyTuple_GetItem(got, 4));
    Py_DECREF(got);
    for (Py_ssize_t q = 0; q < c->rq.n; q++)
        if (names_find(seen, c->rq.str[q], 1) == -2) {
            PyErr_NoMemory();
            return -1;
        }
    rows_free(c, qr);
    if (rows_init(c, block, qr) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* evaluate_dict(qrels, run, specs[, block]) -> None | (the tuple of evaluate_block, int_ids)
 *
 * As evaluate_columns with final set, for a run given as a {query id: {document id: score}} dict (see
 * above), evaluated block rows at a time (whole queries; the row array then stays in the processor's cache
 * and the call's memory bounded); a query may appear as 1 and as "1" within a block (its rows are grouped,
 * as the reference groups them), in two blocks it declines; a document twice within a query declines.
 * int_ids: every query id of the dict is an int (the results hand them back as ints, as the reference's
 * id_kind). tag is None; consumed and rows count every row. */
static PyObject *evaluate_dict(PyObject *self, PyObject *args) {
    PyObject *capsule, *data, *specs_obj;
    Py_ssize_t block = 65536;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO!O|n", &capsule, &PyDict_Type, &data, &specs_obj, &block)) return NULL;
    if (block < 1) {
        PyErr_SetString(PyExc_ValueError, "block must be at least 1");
        return NULL;
    }
    Qrels *qr = (Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels");
    if (qr == NULL) return NULL;
    Spec specs[MAX_SPECS];
    Py_ssize_t n_specs;
    if (read_specs(specs_obj, specs, &n_specs) < 0) return NULL;
    if (qr->busy) {
        PyErr_SetString(PyExc_RuntimeError, "these qrels are being evaluated in another thread");
        return NULL;
    }
    Py_ssize_t total = dict_rows(data);
    if (total <= 0 || total >= INT32_MAX / 4) Py_RETURN_NONE;
    PyObject *keep = PyList_New(0), *lists[3] = {PyList_New(0), PyList_New(0), PyList_New(0)};
    PyObject *result = NULL;
    Names seen;
    Rows c;
    int status = 0, is_int, all_int = 1;
    memset(&c, 0, sizeof(Rows));
    memset(&seen, 0, sizeof(Names));
    if (keep == NULL || !lists[0] || !lists[1] || !lists[2] || names_init(&seen, 1024) < 0 ||
        rows_init(&c, block < total ? block : total, qr) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        status = -2;
    }
    Py_ssize_t pos = 0, where = 0, run_only_rows = 0;
    PyObject *qkey, *inner;
    while (status == 0 && PyDict_Next(data, &pos, &qkey, &inner)) {
        Str q, d;
        Py_ssize_t ipos = 0;
        PyObject *dkey, *value;
        if (!PyLong_CheckExact(qkey)) all_int = 0; /* (as the reference's id_kind: every key, rows or not) */
        if (PyDict_Size(inner) == 0) continue;
        if (c.n_rows >= block) status = dict_flush(qr, specs, n_specs, &c, block, &seen, lists, &run_only_rows);
        if (status == 0) status = dict_id(qkey, keep, &q, &is_int);
        if (status == 0 && seen.n > 0 && names_find(&seen, q, 0) >= 0) status = 1; /* (1 and "1" in two blocks) */
        while (status == 0 && PyDict_Next(inner, &ipos, &dkey, &value)) {
            double score;
            status = dict_id(dkey, keep, &d, &is_int);
            if (status == 0) status = dict_score(value, &score);
            if (status == 0 && where == total) status = 1; /* (the dict changed while read) */
            if (status == 0) {
                status = rows_add(&c, q, d, score, where++, 1);
                if (status < 0) PyErr_NoMemory();
            }
        }
    }
    if (status == 0) status = dict_flush(qr, specs, n_specs, &c, block, &seen, lists, &run_only_rows);
    if (status == 0)
        result = Py_BuildValue("((OOOOnnnO)O)", Py_None, lists[0], lists[1], lists[2], run_only_rows, where, where,
                               Py_True, all_int ? Py_True : Py_False);
    else if (status > 0) {
        result = Py_None;
        Py_INCREF(result);
    }
    rows_free(&c, qr);
    names_free(&seen);
    Py_XDECREF(keep);
    for (int i = 0; i < 3; i++) Py_XDECREF(lists[i]);
    return result;
}

/* ------------------------------------------------------------------------- faces (gate, trec-eval) */

/* qrels_query_ids(qrels) -> tuple of str
 *
 * Every query of the qrels (as parse_qrels or parse_qrels_columns read them), in the order they first came:
 * what a face needs to score the qrels queries a run lacks as 0 (missing="zero", trec_eval -c), the values
 * the reference gives such a query for the measures of this pass (a ranking of one unjudged document). The
 * ids are plain ASCII (the parsers decline anything else). */
static PyObject *qrels_query_ids(PyObject *self, PyObject *args) {
    PyObject *capsule;
    (void)self;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    Qrels *qr = (Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels");
    if (qr == NULL) return NULL;
    PyObject *out = PyTuple_New(qr->queries.n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < qr->queries.n; i++) {
        Str q = qr->queries.str[i];
        PyObject *id = PyUnicode_DecodeASCII((const char *)q.p, q.n, NULL);
        if (id == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SetItem(out, i, id);
    }
    return out;
}

/* ------------------------------------------------------------------------------ end of faces block */

/* --------------------------------------------------------------- trec_eval's measures (issue 26, trec-eval) */

/* The rest of trec_eval's default (official) and all_trec sets, so `ranklens trec-eval` runs on this pass
 * alone: each kind mirrors the reference kernel named beside it operation for operation (the same sums in
 * rank order, the same divisions), so the values are the reference's. Labels here are never negative (the
 * parsers decline negative qrels labels), so a row's label is -1 (not in the qrels) or a judgement >= 0;
 * relevant means label >= 1 (rel=1, the only value declared). spec->param carries the kind's one number
 * (IPrec's recall, RprecMult's mult, SetF's beta2, TrecRBP's and TrecRBPResidual's p). */

static int needs_cutoff(int kind) {
    return kind == PREC || kind == RELATIVE_P || kind == SUCCESS || kind == UNJ || kind == LABEL_AT;
}

/* C's lround of level * R: the c-th relevant document of iprec (kernels/trec_extra.py lround) */
static Py_ssize_t iprec_count(double level, Py_ssize_t num_rel) { return (Py_ssize_t)lround(level * (double)num_rel); }

/* interpolated precision at recall level (trec_extra.iprec_levels): the best precision at a relevant rank at or
 * below the c-th relevant one (c = lround(level R)); c <= 0: the best anywhere; c > relevant retrieved: 0 */
static double iprec_at(const Row *rows, Py_ssize_t n, Py_ssize_t num_rel, double level) {
    Py_ssize_t c = iprec_count(level, num_rel), seen = 0;
    double best = 0.0;
    for (Py_ssize_t r = 0; r < n; r++)
        if (rows[r].label >= 1) {
            seen++;
            double prec = (double)seen / ((double)r + 1.0);
            if (seen >= c && prec > best) best = prec;
        }
    return c > seen ? 0.0 : best;
}

static const double ELEVEN_POINTS[11] = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};

/* the gain of a row (linear: the label; not judged: 0) */
static inline double row_gain(const Row *row) { return row->label > 0 ? (double)row->label : 0.0; }

static double trec_measure(const Spec *s, const Row *rows, Py_ssize_t n, const Qrels *qr, Py_ssize_t qi,
                           const double *div) {
    Py_ssize_t k = s->cutoff > 0 && s->cutoff < n ? s->cutoff : n;
    Py_ssize_t num_rel = qr->num_rel[qi], judged = qr->jstart[qi + 1] - qr->jstart[qi];
    const int32_t *ideal = qr->ideal + qr->ideal_start[qi];
    double big_r = (double)num_rel;
    /* the counts, over the rows the kind reads (the top k, or all): most kinds need none of them */
    Py_ssize_t hits = 0, rel_ret = 0, nonrel_ret = 0, unjudged = 0;
    int k_only = s->kind == NUMRELRET || s->kind == RELATIVE_P || s->kind == SUCCESS || s->kind == UNJ;
    if (k_only || s->kind == UTILITY || s->kind == NONREL_JUDGED_RET || (s->kind >= SET_P && s->kind <= SET_F))
        for (Py_ssize_t r = 0, upto = k_only ? k : n; r < upto; r++) {
            hits += rows[r].label >= 1;
            nonrel_ret += rows[r].label == 0;
            unjudged += rows[r].label < 0;
        }
    rel_ret = hits; /* (over all n rows for the kinds that read rel_ret) */
    double nd = (double)n, rr = (double)rel_ret;
    switch (s->kind) {
    case NUMQ: /* binary.num_q */
        return 1.0;
    case NUMRET: /* binary.num_ret */
        return (double)k;
    case NUMREL: /* binary.num_rel */
        return big_r;
    case NUMRELRET: /* binary.num_rel_ret */
        return (double)hits;
    case RPREC: { /* binary.r_precision */
        Py_ssize_t c = 0;
        for (Py_ssize_t r = 0; r < n && r < num_rel; r++) c += rows[r].label >= 1;
        return num_rel > 0 ? (double)c / big_r : 0.0;
    }
    case BPREF: { /* incomplete.bpref */
        double big_n = (double)(judged - num_rel), den = big_n < big_r ? big_n : big_r, total = 0.0, above = 0.0;
        for (Py_ssize_t r = 0; r < n; r++) {
            if (rows[r].label >= 1) {
                double capped = above < big_r ? above : big_r;
                total += above > 0.0 ? 1.0 - (den > 0.0 ? capped / den : 0.0) : 1.0;
            } else if (rows[r].label == 0)
                above += 1.0;
        }
        return num_rel > 0 ? total / big_r : 0.0;
    }
    case IPREC: /* trec_extra.iprec */
        return iprec_at(rows, n, num_rel, s->param);
    case IPREC_AVG: { /* trec_extra.iprec_avg, the eleven default levels summed from the highest down */
        double total = 0.0;
        for (int j = 10; j >= 0; j--) total = total + iprec_at(rows, n, num_rel, ELEVEN_POINTS[j]);
        return total / 11.0;
    }
    case INFAP: { /* incomplete.inf_ap (no pooled-but-unjudged label: none is negative) */
        double total = 0.0, seen = 0.0, nonrel = 0.0;
        for (Py_ssize_t r = 0; r < n; r++) {
            if (rows[r].label == 0) nonrel += 1.0;
            if (rows[r].label < 1) continue;
            seen += 1.0;
            double j = (double)r, a = seen - 1.0;
            total += r == 0 ? 1.0
                            : 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((a + nonrel + 0.0) / j) *
                                                    ((a + 1e-5) / (a + nonrel + 2 * 1e-5));
        }
        return num_rel > 0 ? total / big_r : 0.0;
    }
    case RPREC_MULT: { /* trec_extra.rprec_mult */
        double c = trunc(s->param * big_r + 0.9);
        Py_ssize_t got = 0;
        for (Py_ssize_t r = 0; r < n && (double)r < c; r++) got += rows[r].label >= 1;
        return c != 0.0 ? (double)got / c : 0.0;
    }
    case UTILITY: /* trec_extra.utility at a=1, b=-1, c=0, d=0, num_docs=0 */
        return 1.0 * rr + -1.0 * (nd - rr) + 0.0 * (big_r - rr) + 0.0 * (0.0 + rr - nd - big_r);
    case BING: { /* trec_extra.bin_g */
        double total = 0.0, seen = 0.0;
        for (Py_ssize_t r = 0; r < n; r++)
            if (rows[r].label >= 1) {
                seen += 1.0;
                total += 1.0 / log2(3.0 + (double)r - seen);
            }
        return seen > 0.0 && num_rel > 0 ? total / big_r : 0.0;
    }
    case GAIN_G: { /* trec_extra.g_measure, linear gains */
        double cost = 0.0, got = 0.0, total = 0.0, best = 0.0;
        for (Py_ssize_t j = 0; j < num_rel; j++) best += (double)ideal[j];
        for (Py_ssize_t r = 0; r < n; r++) {
            double g = row_gain(rows + r), star = r < num_rel ? (double)ideal[r] : 0.0;
            cost += star > 1.0 ? star : 1.0;
            got += g;
            if (g != 0.0) total += g / log2(2.0 + cost - got);
        }
        return best > 0.0 ? total / best : 0.0;
    }
    case NDCG_REL: { /* trec_extra.ndcg_rel, linear gains */
        double dcg = 0.0, at_rel = 0.0, idcg_full = 0.0;
        Py_ssize_t positive = 0;
        for (Py_ssize_t j = 0; j < num_rel; j++) idcg_full += (double)ideal[j] / div[j];
        double idcg = 0.0;
        Py_ssize_t built = 0; /* idcg holds the ideal DCG over the first `built` ideal positions */
        for (Py_ssize_t r = 0; r < n; r++) {
            double g = row_gain(rows + r);
            if (g != 0.0) dcg += g / div[r];
            if (g > 0.0) {
                positive++;
                Py_ssize_t upto = (r < num_rel - 1 ? r : num_rel - 1) + 1;
                while (built < upto) idcg += (double)ideal[built] / div[built], built++;
                if (num_rel > 0 && idcg != 0.0) at_rel += dcg / idcg;
            }
        }
        double missing = (double)(num_rel - positive);
        double total = at_rel + (idcg_full != 0.0 ? missing * dcg / idcg_full : 0.0);
        return total > 0.0 && num_rel != 0 ? total / big_r : 0.0;
    }
    case RNDCG: { /* trec_extra.rndcg, linear gains */
        if (num_rel == 0) return 0.0;
        double dcg_full = 0.0;
        for (Py_ssize_t r = 0; r < n; r++) {
            double g = row_gain(rows + r);
            if (g != 0.0) dcg_full += g / div[r];
        }
        double total = 0.0, count = 0.0, idcg = 0.0, dcg = 0.0;
        for (Py_ssize_t j = 0; j < num_rel; j++) {
            idcg += (double)ideal[j] / div[j];
            if (j < n) {
                double g = row_gain(rows + j);
                if (g != 0.0) dcg += g / div[j];
            }
            if (j == num_rel - 1 || ideal[j + 1] != ideal[j]) {
                double at = j + 1 < n ? dcg : dcg_full;
                total += idcg != 0.0 ? at / idcg : 0.0;
                count += 1.0;
            }
        }
        if (n > num_rel + 1) {
            total = total + (idcg != 0.0 ? dcg_full / idcg : 0.0);
            count += 1.0;
        }
        return count > 0.0 ? total / count : NAN;
    }
    case RELATIVE_P: { /* trec_extra.relative_p */
        double kk = (double)s->cutoff, den = kk < big_r ? kk : big_r;
        return den != 0.0 ? (double)hits / den : 0.0;
    }
    case SUCCESS: /* binary.success */
        return hits > 0 ? 1.0 : 0.0;
    case SET_P: /* trec_extra.set_p */
        return n != 0 ? rr / nd : 0.0;
    case SET_REL_P: { /* trec_extra.set_relative_p */
        double den = nd < big_r ? nd : big_r;
        return den != 0.0 ? rr / den : 0.0;
    }
    case SET_AP: { /* trec_extra.set_ap */
        double den = nd * big_r;
        return den != 0.0 ? rr * rr / den : 0.0;
    }
    case SET_F: { /* trec_extra.set_f */
        double x = s->param, prec = nd != 0.0 ? rr / nd : 0.0, rec = big_r != 0.0 ? rr / big_r : 0.0;
        double den = x * prec + rec;
        return rel_ret > 0 ? (den != 0.0 ? (x + 1.0) * prec * rec / den : 0.0) : 0.0;
    }
    case UNJ: /* trec_extra.unjudged */
        return (double)unjudged / (double)s->cutoff;
    case NONREL_JUDGED_RET: /* trec_extra.num_nonrel_judged_ret */
        return (double)nonrel_ret;
    case TREC_RBP: { /* trec_extra.trec_rbp, linear gains: the table 0..L min-max scaled when L > 1 */
        double top = num_rel > 0 ? (double)ideal[0] : 0.0, p = s->param, pw = 1.0, total = 0.0;
        for (Py_ssize_t r = 0; r < n; r++, pw *= p) {
            double g = row_gain(rows + r);
            if (top > 1.0 && rows[r].label >= 0) g = (g - 0.0) / (top - 0.0);
            if (g != 0.0) total += g * pw;
        }
        return (1.0 - p) * total;
    }
    case TREC_RBP_RESID: { /* trec_extra.trec_rbp_residual */
        double p = s->param, pw = 1.0, total = 0.0;
        Py_ssize_t unj = 0;
        for (Py_ssize_t r = 0; r < n; r++, pw *= p)
            if (rows[r].label < 0) {
                total += pw;
                unj++;
            }
        return unj > 0 ? pw + (1.0 - p) * total : 0.0;
    }
    case LABEL_AT: /* trec_eval's relstring, one rank at a time: the label at rank cutoff (-1: not judged; -2: none) */
        return s->cutoff <= n ? (double)rows[s->cutoff - 1].label : -2.0;
    }
    return 0.0;
}

/* placeholder_values(qrels, specs) -> list of float
 *
 * Every qrels query's values (in qrels_query_ids order, one per spec, query after query) when it is ranked
 * against trec_eval's placeholder document alone (missing="zero", trec_eval -c: engine/placeholder.py), with
 * the values trec_eval clears 0 (num_ret, unj, utility, rbp_resid; relstring empty: LABEL_AT -2). */
static PyObject *placeholder_values(PyObject *self, PyObject *args) {
    PyObject *capsule, *specs_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &capsule, &specs_obj)) return NULL;
    Qrels *qr = (Qrels *)PyCapsule_GetPointer(capsule, "ranklens.qrels");
    if (qr == NULL) return NULL;
    Spec specs[MAX_SPECS];
    Py_ssize_t n_specs;
    if (read_specs(specs_obj, specs, &n_specs) < 0) return NULL;
    static const char placeholder[] = "ceci_nest_pas_un_docno";
    Py_ssize_t plen = (Py_ssize_t)strlen(placeholder);
    double div[2] = {log2(2.0), log2(3.0)}; /* (one row: rank 0; the ideal: see below) */
    PyObject *out = PyList_New(qr->queries.n * n_specs);
    if (out == NULL) return NULL;
    for (Py_ssize_t q = 0; q < qr->queries.n; q++) {
        Row row = {1.0, (const unsigned char *)placeholder, fast_hash((const unsigned char *)placeholder, plen),
                   (int32_t)plen, -1, 0};
        for (Py_ssize_t k = qr->jstart[q]; k < qr->jstart[q + 1]; k++) {
            const Judgement *jg = qr->judgements + qr->jorder[k];
            if (jg->doc_len == plen && memcmp(jg->doc, placeholder, (size_t)plen) == 0) row.label = jg->label;
        }
        double *ideal_div = NULL;
        if (qr->num_rel[q] > 1) { /* (the ideal is longer than the one row: the divisors of every position) */
            ideal_div = (double *)malloc((size_t)qr->num_rel[q] * sizeof(double));
            if (ideal_div == NULL) {
                Py_DECREF(out);
                return PyErr_NoMemory();
            }
            for (Py_ssize_t r = 0; r < qr->num_rel[q]; r++) ideal_div[r] = log2((double)r + 2.0);
        }
        const double *d = ideal_div != NULL ? ideal_div : div;
        for (Py_ssize_t s = 0; s < n_specs; s++) {
            int kind = specs[s].kind;
            double v = kind == NUMRET || kind == UNJ || kind == UTILITY || kind == TREC_RBP_RESID ? 0.0
                       : kind == LABEL_AT                                                      ? -2.0
                       : kind >= NUMQ ? trec_measure(&specs[s], &row, 1, qr, q, d)
                                      : measure(&specs[s], &row, 1, qr->ideal + qr->ideal_start[q], qr->num_rel[q], d);
            PyObject *f = PyFloat_FromDouble(v);
            if (f == NULL) {
                free(ideal_div);
                Py_DECREF(out);
                return NULL;
            }
            PyList_SetItem(out, q * n_specs + s, f);
        }
        free(ideal_div);
    }
    return out;
}

/* ---------------------------------------------------------------------- end of trec_eval's measures */

static PyMethodDef methods[] = {
    {"parse_qrels", parse_qrels, METH_VARARGS, "parse_qrels(text) -> None or (qrels, number of queries)"},
    {"evaluate_block", evaluate_block, METH_VARARGS,
     "evaluate_block(qrels, text, end, specs, final) -> None or (tag, run_queries, evaluated, values, "
     "run_only_rows, consumed, rows, grouped)"},
    {"parse_qrels_columns", parse_qrels_columns, METH_VARARGS,
     "parse_qrels_columns(owner, segments) -> None or (qrels, number of queries)"},
    {"evaluate_columns", evaluate_columns, METH_VARARGS,
     "evaluate_columns(qrels, segments, specs, final) -> None or the tuple of evaluate_block"},
    {"parse_qrels_dict", parse_qrels_dict, METH_VARARGS,
     "parse_qrels_dict(qrels) -> None or (qrels, number of queries)"},
    {"evaluate_dict", evaluate_dict, METH_VARARGS,
     "evaluate_dict(qrels, run, specs[, block]) -> None or (the tuple of evaluate_block, int_ids)"},
    {"qrels_query_ids", qrels_query_ids, METH_VARARGS, "qrels_query_ids(qrels) -> every qrels query id (faces)"},
    {"placeholder_values", placeholder_values, METH_VARARGS,
     "placeholder_values(qrels, specs) -> every qrels query's values against trec_eval's placeholder (-c)"},
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
