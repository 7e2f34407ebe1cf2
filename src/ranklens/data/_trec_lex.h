/* The lexical rules of TREC text shared by the compiled readers (issue 12): byte classes, the 64-byte
 * separator mask, the id hash and the strict score grammar. Included by ranklens/data/_ctrec.c (the run
 * tokenizer) and ranklens/_cexpress.c (the express evaluation), so both read a line the same way. */
#ifndef RANKLENS_TREC_LEX_H
#define RANKLENS_TREC_LEX_H
#include <stdint.h>
#include <string.h>

/* byte classes: 0 a token byte, 1 a separator inside a line, 2 the line break */
static unsigned char CLASS[256];

static void init_class(void) {
    memset(CLASS, 0, sizeof CLASS);
    CLASS[' '] = CLASS['\t'] = CLASS['\r'] = CLASS['\v'] = CLASS['\f'] = 1;
    CLASS['\n'] = 2;
}

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define HAVE_SEP_MASK 1
/* bit i set when byte p[i] (i < 64) is a separator of class 1 (space, or 9..13: tab, LF, VT, FF, CR; the
 * caller passes a line without its LF); *cr gets the bits of the CRs among them */
static inline uint64_t sep_mask64(const unsigned char *p, uint64_t *cr) {
    const __m128i space = _mm_set1_epi8(' '), nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4);
    const __m128i ret = _mm_set1_epi8('\r');
    uint64_t m = 0, c = 0;
    for (int k = 0; k < 4; k++) {
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        __m128i d = _mm_sub_epi8(b, nine);
        __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(d, four), d); /* 9 <= b <= 13 */
        __m128i sep = _mm_or_si128(_mm_cmpeq_epi8(b, space), ctl);
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(sep) << (16 * k);
        c |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, ret)) << (16 * k);
    }
    *cr = c;
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

/* The fields of the line that starts at *pos (up to the next LF or end): the start and length of the first
 * max of them in starts/lens, *more set when there are more; returns how many (at most max) and moves *pos
 * past the line break, or -1 when the line holds a CR that does not end it (a CR is a separator only just
 * before the LF: a line ends in LF or CRLF, and the pure reader names a lone CR's line). size is the length of
 * the whole buffer, which must hold at least 64 readable bytes past *pos for the mask path (a bytes object's
 * terminating NUL counts). */
static inline int line_fields(const unsigned char *u, Py_ssize_t *pos_io, Py_ssize_t end, Py_ssize_t size,
                              Py_ssize_t *starts, Py_ssize_t *lens, int max, int *more) {
    Py_ssize_t pos = *pos_io;
    int fields = 0;
    *more = 0;
#ifdef HAVE_SEP_MASK
    /* a line of at most 64 bytes (all of a usual run's): its fields from a bit mask of its separators,
     * without a branch per byte; the 64 bytes read must lie within the buffer */
    const unsigned char *nlp = (const unsigned char *)memchr(u + pos, '\n', (size_t)(end - pos));
    Py_ssize_t lend = nlp ? (Py_ssize_t)(nlp - u) : end, llen = lend - pos;
    if (llen <= 64 && pos + 64 <= size) {
        uint64_t valid = llen == 64 ? ~(uint64_t)0 : (((uint64_t)1 << llen) - 1), cr;
        uint64_t tok = ~sep_mask64(u + pos, &cr) & valid;
        if ((cr & valid) != 0 && (cr & valid) != (nlp && llen ? (uint64_t)1 << (llen - 1) : 0)) return -1;
        uint64_t first = tok & ~(tok << 1), last = tok & ~(tok >> 1);
        while (first) {
            if (fields == max) {
                *more = 1;
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
        while (pos < end && CLASS[u[pos]] == 1) {
            if (u[pos] == '\r' && (pos + 1 >= end || u[pos + 1] != '\n')) return -1;
            pos++;
        }
        if (pos >= end || u[pos] == '\n') break;
        Py_ssize_t start = pos;
        while (pos < end && CLASS[u[pos]] == 0) pos++;
        if (fields < max) {
            starts[fields] = start;
            lens[fields] = pos - start;
            fields++;
        } else *more = 1;
    }
    if (pos < end) pos++; /* the line break */
    *pos_io = pos;
    return fields;
}

#endif
