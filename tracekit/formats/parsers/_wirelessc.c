/* The fast path of the wireless parser (tracekit/formats/parsers/wireless.py): the lines of a
 * wireless trace -- old CMU format and new `-t` format events, `M` movements, `N` energy
 * readings, DSR's own `S...` lines -- straight into column buffers in one pass over a chunk
 * of complete lines, with the GIL released.
 *
 * It reads each line as the polars parser does -- the whitespace normalised (runs of blanks
 * are one separator; blanks at the end and a "\r" before the "\n" go), the old format by
 * position, the new one as `-key value` pairs, the first occurrence of a key winning -- but
 * accepts only chunks whose every line is one it reads exactly as that parser would (a
 * new-format line in ns-2's own layout, nearly every one, is read as it comes, without
 * splitting it into tokens first: new_laid_out):
 *   - old: `E T _N_ LAYER REASON UID TYPE SIZE [h h h h]`, an optional `[energy ...]` block,
 *     then nothing (MAC control frames), or `------- [s:p d:p ttl nh]` and the protocol part
 *     (`[seq ack] nfwd x` for tcp/ack, `[seq] nfwd x` for cbr, verbatim in detail for any
 *     other type), or a part that is not an IP header (ARP's `------- [REQUEST ...]`),
 *     verbatim in detail;
 *   - new: every key the polars parser reads, where present, in its plain form; an IP part
 *     (-Is/-Id/-Ii) complete; tcp/cbr with their sequence number;
 *   - `M T N (X, Y, Z), (DX, DY), SPEED`, `N -t T -n N -e E`, `S<tag> T [_N_] text`.
 * Numbers must be in the plain form ns-2 prints (no '+', no leading zeros, decimal ints in
 * their column's range, hex in lower case, finite floats). Anything else in the chunk -- a
 * blank, '#' or 'v' line, a malformed line, an odd number, a control byte or one above 127,
 * more than 64 distinct values in a dictionary column -- and parse_wireless returns None:
 * the caller parses the chunk with the polars parser, which also explains bad lines. So this
 * file decides nothing the polars parser does not (tests/test_parsers_wireless_fast.py
 * compares the two).
 *
 * parse_wireless(data: bytes, first_line_no: int) -> None | (events, movements, energy, logs, dicts)
 *   each table: (n_rows, buffers, validity) with one buffer per column of its schema in
 *               wireless.py, in order (little-endian values; dictionary columns as codes
 *               0..63, read as uint32; a string column as its n + 1 int64 offsets, its
 *               characters being the last buffer: Arrow's large_string) and a validity
 *               bitmap (Arrow layout) per column or None (no NULLs); movements have no
 *               NULLs and no validity
 *   dicts:      the values of the codes of events' fmt, event, layer, reason, ptype and of
 *               logs' tag (lists of str, code order)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    EV_LINE_NO, EV_FMT, EV_EVENT, EV_TIME, EV_NODE, EV_LAYER, EV_REASON, EV_PKT_ID, EV_PTYPE, EV_SIZE,
    EV_MAC_DUR, EV_MAC_DST, EV_MAC_SRC, EV_MAC_TYPE, EV_SRC_NODE, EV_SRC_PORT, EV_DST_NODE, EV_DST_PORT,
    EV_TTL, EV_NEXT_HOP, EV_FID, EV_SEQ, EV_TCP_ACK, EV_N_FORWARDS, EV_X, EV_Y, EV_Z, EV_DETAIL, N_EV
};
/* bytes per value (the dictionary columns: uint32 codes; detail: its int64 offsets) */
static const int EV_WIDTH[N_EV] = {8, 4, 4, 8, 4, 4, 4, 8, 4, 4, 8, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 4, 8, 8, 8, 8};
/* the columns without NULLs */
static const int EV_NOTNULL[N_EV] = {[EV_LINE_NO] = 1, [EV_FMT] = 1, [EV_EVENT] = 1, [EV_TIME] = 1, [EV_NODE] = 1,
                                     [EV_LAYER] = 1};
enum { MV_LINE_NO, MV_TIME, MV_NODE, MV_X, MV_Y, MV_Z, MV_DX, MV_DY, MV_SPEED, N_MV };
static const int MV_WIDTH[N_MV] = {8, 8, 4, 8, 8, 8, 8, 8, 8};
enum { EN_LINE_NO, EN_TIME, EN_NODE, EN_ENERGY, EN_IDLE, EN_SLEEP, EN_TX, EN_RX, N_EN };
static const int EN_WIDTH[N_EN] = {8, 8, 4, 8, 8, 8, 8, 8};
enum { LG_LINE_NO, LG_TAG, LG_TIME, LG_NODE, LG_TEXT, N_LG };
static const int LG_WIDTH[N_LG] = {8, 4, 8, 4, 8};
enum { D_FMT, D_EVENT, D_LAYER, D_REASON, D_PTYPE, D_TAG, N_DICTS };

/* the small helpers inlined where they are called (gcc -O2 left the number conversions out
 * of line: a call per field) */
#if defined(__GNUC__)
#define INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define INLINE inline
#define NOINLINE
#endif

#define MAX_DICT 64
#define MAX_TOK 160

typedef struct {
    const char *s[MAX_DICT];
    Py_ssize_t len[MAX_DICT];
    int n;
    int last;
} Dict;

typedef struct {
    const char *s, *e; /* [s, e) */
} Tok;

static locale_t c_locale;


/* a == b over len bytes (short strings: inline, not a call to memcmp) */
static INLINE int same(const char *a, const char *b, Py_ssize_t len) {
    for (Py_ssize_t k = 0; k < len; k++)
        if (a[k] != b[k])
            return 0;
    return 1;
}

/* the code of string s[0:len] in d, adding it; -1 when d is full */
static INLINE int dict_code(Dict *d, const char *s, Py_ssize_t len) {
    if (d->n && d->len[d->last] == len && same(d->s[d->last], s, len))
        return d->last;
    for (int i = 0; i < d->n; i++) {
        if (d->len[i] == len && same(d->s[i], s, len)) {
            d->last = i;
            return i;
        }
    }
    if (d->n == MAX_DICT)
        return -1;
    d->s[d->n] = s;
    d->len[d->n] = len;
    d->last = d->n;
    return d->n++;
}

/* token t is lit, a string literal or a char array (never a pointer): its length is known
 * at compile time (no strlen) */
#define tok_is(t, lit) ((t).e - (t).s == (Py_ssize_t)sizeof(lit) - 1 && same((t).s, lit, sizeof(lit) - 1))

/* -?\d+ (the polars parser's INTF): whether [s, e) is one */
static INLINE int loose_int(const char *s, const char *e) {
    if (s < e && *s == '-')
        s++;
    if (s >= e)
        return 0;
    for (; s < e; s++)
        if ((unsigned)(*s - '0') >= 10)
            return 0;
    return 1;
}

/* [s, e) as a plain decimal integer: -?D+ without a leading zero (nor "-0"), within [lo, hi] */
static INLINE int span_int(const char *s, const char *e, int64_t lo, int64_t hi, int64_t *out) {
    int neg = 0;
    if (s < e && *s == '-') {
        neg = 1;
        s++;
    }
    Py_ssize_t nd = e - s;
    if (nd <= 0 || nd > 19 || (*s == '0' && (nd > 1 || neg)))
        return -1;
    uint64_t v = 0;
    for (const char *p = s; p < e; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d >= 10)
            return -1;
        v = v * 10 + d; /* 19 digits fit uint64 */
    }
    int64_t x;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return -1;
        x = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX)
            return -1;
        x = (int64_t)v;
    }
    if (x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static INLINE int span_i32(const char *s, const char *e, int32_t *out) {
    int64_t v;
    if (span_int(s, e, INT32_MIN, INT32_MAX, &v) < 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

static INLINE int span_i64(const char *s, const char *e, int64_t *out) {
    return span_int(s, e, INT64_MIN, INT64_MAX, out);
}

/* lower-case hex without a leading zero (but "0"), up to 8 digits, at most hi */
static INLINE int span_hex(const char *s, const char *e, int64_t hi, int64_t *out) {
    Py_ssize_t nd = e - s;
    if (nd <= 0 || nd > 8 || (*s == '0' && nd > 1))
        return -1;
    int64_t v = 0;
    for (; s < e; s++) {
        unsigned c = (unsigned char)*s;
        if (c - '0' < 10)
            v = v * 16 + (c - '0');
        else if (c - 'a' < 6)
            v = v * 16 + (c - 'a' + 10);
        else
            return -1;
    }
    if (v > hi)
        return -1;
    *out = v;
    return 0;
}

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* [s, e) by strtod in the C locale (the rare number span_f64 cannot convert exactly); kept
 * out of line, so that span_f64 is inlined where it is called */
static NOINLINE int strtod_span(const char *s, const char *e, double *v) {
    char buf[64];
    Py_ssize_t len = e - s;
    if (len >= (Py_ssize_t)sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    *v = strtod_l(buf, NULL, c_locale);
    return 0;
}

/* [s, e) as -?D+(.D+)?([eE][-+]?D{1,5})? without a leading zero before another digit;
 * finite; correctly rounded (exact fast path when the digits fit 2^53 and the power of ten
 * is exact, else strtod_l) */
static INLINE int span_f64(const char *s, const char *e, double *out) {
    const char *p = s;
    int neg = 0;
    if (p < e && *p == '-') {
        neg = 1;
        p++;
    }
    const char *d0 = p;
    uint64_t m = 0;
    int nd = 0, frac = 0;
    while (p < e && (unsigned)(*p - '0') < 10) {
        if (nd < 19)
            m = m * 10 + (uint64_t)(*p - '0');
        p++;
        nd++;
    }
    if (nd == 0 || (nd > 1 && *d0 == '0'))
        return -1;
    if (p < e && *p == '.') {
        p++;
        if (p >= e || (unsigned)(*p - '0') >= 10)
            return -1; /* "1." */
        while (p < e && (unsigned)(*p - '0') < 10) {
            if (nd < 19)
                m = m * 10 + (uint64_t)(*p - '0');
            p++;
            nd++;
            frac++;
        }
    }
    int ex = 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < e && (*p == '-' || *p == '+')) {
            eneg = *p == '-';
            p++;
        }
        int ne = 0;
        while (p < e && (unsigned)(*p - '0') < 10) {
            if (ne < 6)
                ex = ex * 10 + (*p - '0');
            p++;
            ne++;
        }
        if (ne == 0 || ne > 5)
            return -1;
        if (eneg)
            ex = -ex;
    }
    if (p != e)
        return -1;
    double v;
    int k = ex - frac;
    if (nd <= 15 && k >= -22 && k <= 22) {
        v = (double)m;
        v = k < 0 ? v / POW10[-k] : v * POW10[k];
        if (neg)
            v = -v;
    } else if (strtod_span(s, e, &v) < 0) {
        return -1;
    }
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* `node.port` (new format -Is/-Id): both plain int32 */
static INLINE int span_addr(const char *s, const char *e, int32_t *node, int32_t *port) {
    const char *dot = s;
    while (dot < e && *dot != '.')
        dot++;
    if (dot == e)
        return -1;
    if (span_i32(s, dot, node) < 0 || span_i32(dot + 1, e, port) < 0)
        return -1;
    return 0;
}

/* -?\d+:-?\d+ (old format [src:port dst:port ...]), loosely; *colon set */
static INLINE int loose_pair(const char *s, const char *e, const char **colon) {
    const char *c = s;
    while (c < e && *c != ':')
        c++;
    if (c == e || !loose_int(s, c) || !loose_int(c + 1, e))
        return 0;
    *colon = c;
    return 1;
}

/* the new format's keys the polars parser reads (_NEW_KEYS), and -P (the protocol part) */
enum {
    K_T, K_NI, K_NL, K_NW, K_HD, K_NX, K_NY, K_NZ, K_NE, K_MA, K_MD, K_MS, K_MT, K_IS, K_ID, K_IT, K_IL, K_IF,
    K_II, K_IV, K_PN, K_PS, K_PA, K_PI, K_PF, K_P, N_KEYS
};
_Static_assert(N_KEYS <= 32, "a line's keys are bits of a uint32_t");

/* the key of a three-byte token `-XY`: KEY3[X][Y] (-1: none), filled at import from
 * KEYS3 (a table look-up, not a switch: its indirect jump mispredicts on every other token) */
static signed char KEY3[128][128];
static const struct {
    const char *name;
    int key;
} KEYS3[] = {{"Ni", K_NI}, {"Nl", K_NL}, {"Nw", K_NW}, {"Nx", K_NX}, {"Ny", K_NY}, {"Nz", K_NZ}, {"Ne", K_NE},
             {"Hd", K_HD}, {"Ma", K_MA}, {"Md", K_MD}, {"Ms", K_MS}, {"Mt", K_MT}, {"Is", K_IS}, {"Id", K_ID},
             {"It", K_IT}, {"Il", K_IL}, {"If", K_IF}, {"Ii", K_II}, {"Iv", K_IV}, {"Pn", K_PN}, {"Ps", K_PS},
             {"Pa", K_PA}, {"Pi", K_PI}, {"Pf", K_PF}};

static inline int key_of(Tok t) {
    Py_ssize_t n = t.e - t.s;
    const unsigned char *s = (const unsigned char *)t.s;
    if (s[0] != '-')
        return -1;
    if (n == 3)
        return KEY3[s[1] & 127][s[2] & 127]; /* a token's bytes are below 127 */
    if (n == 2)
        return s[1] == 't' ? K_T : s[1] == 'P' ? K_P : -1;
    return -1;
}

typedef struct {
    char *col[N_EV];
    uint8_t *valid[N_EV];
    char *detail; /* the detail column's characters */
    int64_t detail_len;
    char *mv[N_MV];
    Py_ssize_t mv_cap;
    /* energy rows: N_EN columns of en_cap rows each and the validity of the last four (the
     * old format's [energy] block), in one block allocated at the first energy row */
    char *en, *en_col[N_EN];
    uint8_t *en_valid;
    Py_ssize_t en_cap, n_en;
    /* DSR's log lines: N_LG columns of lg_cap rows each, validity of node and text, the
     * characters of text; one block */
    char *lg, *lg_col[N_LG], *lg_text;
    uint8_t *lg_valid[N_LG];
    int64_t lg_text_len;
    Py_ssize_t lg_cap, n_lg;
    Dict dict[N_DICTS];
} Out;

#define I64(c) ((int64_t *)o->col[c])
#define I32(c) ((int32_t *)o->col[c])
#define F64(c) ((double *)o->col[c])
#define SETV(c) (o->valid[c][i >> 3] |= (uint8_t)(1u << (i & 7)))
/* a nullable column's value, NULL: 0 in the buffer, its validity bit left clear */
#define NULL64(c) (I64(c)[i] = 0)
#define NULL32(c) (I32(c)[i] = 0)

/* tok[k..n) joined by single spaces (the normalised text) at text + *len; the new *len */
static INLINE int64_t put_text(char *text, int64_t *len, const Tok *tok, int k, int n) {
    char *d = text + *len;
    /* tokens one space apart, as ns-2 writes them: the text is one span of the line */
    int plain = 1;
    for (int j = k + 1; j < n && plain; j++)
        plain = tok[j].s == tok[j - 1].e + 1 && tok[j - 1].e[0] == ' ';
    if (plain && n > k) {
        memcpy(d, tok[k].s, tok[n - 1].e - tok[k].s);
        d += tok[n - 1].e - tok[k].s;
    } else {
        for (int j = k; j < n; j++) {
            if (j > k)
                *d++ = ' ';
            memcpy(d, tok[j].s, tok[j].e - tok[j].s);
            d += tok[j].e - tok[j].s;
        }
    }
    *len = (int64_t)(d - text);
    return *len;
}

/* tok[k..n) as row i's detail */
static INLINE void put_detail(Out *o, Py_ssize_t i, const Tok *tok, int k, int n) {
    I64(EV_DETAIL)[i + 1] = put_text(o->detail, &o->detail_len, tok, k, n);
    SETV(EV_DETAIL);
}

/* an energy row; e[1..4] (idle, sleep, tx, rx) only with all5 (else NULL). -1: no memory */
static int add_energy(Out *o, int64_t line_no, double time, int32_t node, const double *e, int all5) {
    if (!o->en) {
        Py_ssize_t cap = o->en_cap, off = 0;
        size_t bytes = (size_t)(cap + 7) / 8;
        for (int c = 0; c < N_EN; c++)
            bytes += (size_t)cap * EN_WIDTH[c];
        if (!(o->en = PyMem_RawCalloc(bytes, 1)))
            return -1;
        for (int c = 0; c < N_EN; c++) {
            o->en_col[c] = o->en + off;
            off += cap * EN_WIDTH[c];
        }
        o->en_valid = (uint8_t *)o->en + off;
    }
    Py_ssize_t k = o->n_en++;
    ((int64_t *)o->en_col[EN_LINE_NO])[k] = line_no;
    ((double *)o->en_col[EN_TIME])[k] = time;
    ((int32_t *)o->en_col[EN_NODE])[k] = node;
    ((double *)o->en_col[EN_ENERGY])[k] = e[0];
    for (int c = 1; c < 5; c++)
        ((double *)o->en_col[EN_ENERGY + c])[k] = all5 ? e[c] : 0;
    if (all5)
        o->en_valid[k >> 3] |= (uint8_t)(1u << (k & 7));
    return 0;
}

static INLINE int put_dict(Out *o, int dict, int c, Py_ssize_t i, const char *s, Py_ssize_t len) {
    int code = dict_code(&o->dict[dict], s, len);
    if (code < 0)
        return -1;
    I32(c)[i] = code;
    if (!EV_NOTNULL[c])
        SETV(c);
    return 0;
}

/* `[energy E ei I es S et T er R]` at tok[b..b+10): 0 (e[] set), or -1 */
static int energy_block(const Tok *tok, int b, int n, double *e) {
    static const char names[4][3] = {"ei", "es", "et", "er"}; /* arrays: tok_is takes sizeof */
    if (b + 10 > n || !tok_is(tok[b], "[energy") || span_f64(tok[b + 1].s, tok[b + 1].e, &e[0]) < 0)
        return -1;
    for (int k = 0; k < 4; k++) {
        Tok v = tok[b + 3 + 2 * k];
        if (!tok_is(tok[b + 2 + 2 * k], names[k]))
            return -1;
        if (k == 3 && (v.e[-1] != ']' || v.e - v.s < 2))
            return -1;
        if (span_f64(v.s, k == 3 ? v.e - 1 : v.e, &e[k + 1]) < 0)
            return -1;
    }
    return 0;
}

/* the old CMU format: 0, 1 (the line has an [energy] block: e[] set), or -1 (not a line for
 * the fast path) */
static int old_line(Out *o, Py_ssize_t i, const Tok *tok, int n, double *e) {
    int64_t v;
    if (n < 12)
        return -1;
    if (span_f64(tok[1].s, tok[1].e, &F64(EV_TIME)[i]) < 0)
        return -1;
    if (tok[2].e - tok[2].s < 3 || tok[2].s[0] != '_' || tok[2].e[-1] != '_' ||
        span_i32(tok[2].s + 1, tok[2].e - 1, &I32(EV_NODE)[i]) < 0)
        return -1;
    if (put_dict(o, D_LAYER, EV_LAYER, i, tok[3].s, tok[3].e - tok[3].s) < 0)
        return -1;
    if (tok_is(tok[4], "---"))
        NULL32(EV_REASON);
    else if (put_dict(o, D_REASON, EV_REASON, i, tok[4].s, tok[4].e - tok[4].s) < 0)
        return -1;
    if (span_i64(tok[5].s, tok[5].e, &I64(EV_PKT_ID)[i]) < 0)
        return -1;
    SETV(EV_PKT_ID);
    Tok ptype = tok[6];
    if (put_dict(o, D_PTYPE, EV_PTYPE, i, ptype.s, ptype.e - ptype.s) < 0)
        return -1;
    if (span_i32(tok[7].s, tok[7].e, &I32(EV_SIZE)[i]) < 0)
        return -1;
    SETV(EV_SIZE);
    /* [dur dst src type] */
    if (tok[8].s[0] != '[' || tok[11].e[-1] != ']')
        return -1;
    if (span_hex(tok[8].s + 1, tok[8].e, INT64_MAX, &v) < 0)
        return -1;
    I64(EV_MAC_DUR)[i] = v;
    if (span_hex(tok[9].s, tok[9].e, INT64_MAX, &v) < 0)
        return -1;
    I64(EV_MAC_DST)[i] = v;
    if (span_hex(tok[10].s, tok[10].e, INT64_MAX, &v) < 0)
        return -1;
    I64(EV_MAC_SRC)[i] = v;
    if (span_hex(tok[11].s, tok[11].e - 1, INT32_MAX, &v) < 0)
        return -1;
    I32(EV_MAC_TYPE)[i] = (int32_t)v;
    SETV(EV_MAC_DUR);
    SETV(EV_MAC_DST);
    SETV(EV_MAC_SRC);
    SETV(EV_MAC_TYPE);
    int is_tcp = tok_is(ptype, "tcp") || tok_is(ptype, "ack");
    int is_cbr = tok_is(ptype, "cbr");
    NULL32(EV_FID);
    F64(EV_X)[i] = F64(EV_Y)[i] = F64(EV_Z)[i] = 0;
    NULL64(EV_SEQ);
    NULL64(EV_TCP_ACK);
    NULL32(EV_N_FORWARDS);
    /* an energy block (an energy model), then the rest from tok[b] */
    int b = 12, rc = 0;
    if (n > 12 && tok_is(tok[12], "[energy")) {
        if (energy_block(tok, 12, n, e) < 0)
            return -1; /* not whole: the polars parser */
        b = 22;
        rc = 1;
    }
    /* the IP part: `X [s:p d:p ttl nh]`, loosely as the polars parser's _OLD_IP has it */
    const char *c1, *c2;
    int ip = n >= b + 5 && tok[b + 1].s[0] == '[' && loose_pair(tok[b + 1].s + 1, tok[b + 1].e, &c1) &&
             loose_pair(tok[b + 2].s, tok[b + 2].e, &c2) && loose_int(tok[b + 3].s, tok[b + 3].e) &&
             tok[b + 4].e[-1] == ']' && loose_int(tok[b + 4].s, tok[b + 4].e - 1);
    if (!ip) {
        I32(EV_SRC_NODE)[i] = I32(EV_SRC_PORT)[i] = I32(EV_DST_NODE)[i] = I32(EV_DST_PORT)[i] = 0;
        I32(EV_TTL)[i] = I32(EV_NEXT_HOP)[i] = 0;
        if (is_tcp || is_cbr)
            return -1; /* a bad line */
        if (n == b)
            return rc; /* MAC control frames: no detail */
        /* the rest verbatim, without a leading `-+ ` */
        int dashes = 1;
        for (const char *p = tok[b].s; p < tok[b].e; p++)
            dashes &= *p == '-';
        put_detail(o, i, tok, dashes && n > b + 1 ? b + 1 : b, n);
        return rc;
    }
    if (span_i32(tok[b + 1].s + 1, c1, &I32(EV_SRC_NODE)[i]) < 0 || span_i32(c1 + 1, tok[b + 1].e, &I32(EV_SRC_PORT)[i]) < 0 ||
        span_i32(tok[b + 2].s, c2, &I32(EV_DST_NODE)[i]) < 0 || span_i32(c2 + 1, tok[b + 2].e, &I32(EV_DST_PORT)[i]) < 0 ||
        span_i32(tok[b + 3].s, tok[b + 3].e, &I32(EV_TTL)[i]) < 0 ||
        span_i32(tok[b + 4].s, tok[b + 4].e - 1, &I32(EV_NEXT_HOP)[i]) < 0)
        return -1;
    SETV(EV_SRC_NODE);
    SETV(EV_SRC_PORT);
    SETV(EV_DST_NODE);
    SETV(EV_DST_PORT);
    SETV(EV_TTL);
    SETV(EV_NEXT_HOP);
    const Tok *t = tok + b + 5; /* the protocol part */
    int np = n - b - 5;
    if (is_tcp) {
        /* [seq ack] nfwd x */
        if (np != 4 || t[0].s[0] != '[' || t[1].e[-1] != ']' || !loose_int(t[3].s, t[3].e) ||
            span_i64(t[0].s + 1, t[0].e, &I64(EV_SEQ)[i]) < 0 || span_i64(t[1].s, t[1].e - 1, &I64(EV_TCP_ACK)[i]) < 0 ||
            span_i32(t[2].s, t[2].e, &I32(EV_N_FORWARDS)[i]) < 0)
            return -1;
        SETV(EV_SEQ);
        SETV(EV_TCP_ACK);
        SETV(EV_N_FORWARDS);
    } else if (is_cbr) {
        /* [seq] nfwd x */
        if (np != 3 || t[0].s[0] != '[' || t[0].e[-1] != ']' || !loose_int(t[2].s, t[2].e) ||
            span_i64(t[0].s + 1, t[0].e - 1, &I64(EV_SEQ)[i]) < 0 || span_i32(t[1].s, t[1].e, &I32(EV_N_FORWARDS)[i]) < 0)
            return -1;
        SETV(EV_SEQ);
        SETV(EV_N_FORWARDS);
    } else if (np > 0) {
        put_detail(o, i, tok, b + 5, n);
    }
    return rc;
}

/* the new -t format, from the value of each key (val[k], where bit k of has is set: the
 * line has a -key followed by a value) and the protocol part (ptail[0..ntail): `-P` and the tokens after it;
 * ntail 0: no -P): 0, 1 (and *energy set: the line has an -Ne >= 0), or -1 (not a line for
 * the fast path) */
static INLINE int new_line(Out *o, Py_ssize_t i, const Tok *val, uint32_t has, const Tok *ptail, int ntail,
                           double *energy) {
#define HAS(k) ((has >> (k)) & 1u)
#define VS(k) val[k].s
#define VE(k) val[k].e
    int64_t v;
    double x;
    /* time, node, layer: required */
    if (!HAS(K_T) || span_f64(VS(K_T), VE(K_T), &F64(EV_TIME)[i]) < 0)
        return -1;
    if (!HAS(K_NI) || span_i32(VS(K_NI), VE(K_NI), &I32(EV_NODE)[i]) < 0)
        return -1;
    if (!HAS(K_NL) || put_dict(o, D_LAYER, EV_LAYER, i, VS(K_NL), VE(K_NL) - VS(K_NL)) < 0)
        return -1;
    if (!HAS(K_NW) || tok_is(val[K_NW], "---"))
        NULL32(EV_REASON);
    else if (put_dict(o, D_REASON, EV_REASON, i, VS(K_NW), VE(K_NW) - VS(K_NW)) < 0)
        return -1;
    /* optional int32 columns */
    static const int I32KEY[][2] = {{K_HD, EV_NEXT_HOP}, {K_IL, EV_SIZE}, {K_IF, EV_FID}, {K_IV, EV_TTL}};
    for (int k = 0; k < 4; k++) {
        int key = I32KEY[k][0], c = I32KEY[k][1];
        if (!HAS(key)) {
            NULL32(c);
        } else {
            if (span_i32(VS(key), VE(key), &I32(c)[i]) < 0)
                return -1;
            SETV(c);
        }
    }
    if (!HAS(K_II)) {
        NULL64(EV_PKT_ID);
    } else {
        if (span_i64(VS(K_II), VE(K_II), &I64(EV_PKT_ID)[i]) < 0)
            return -1;
        SETV(EV_PKT_ID);
    }
    static const int FKEY[][2] = {{K_NX, EV_X}, {K_NY, EV_Y}, {K_NZ, EV_Z}};
    for (int k = 0; k < 3; k++) {
        int key = FKEY[k][0], c = FKEY[k][1];
        if (!HAS(key)) {
            F64(c)[i] = 0;
        } else {
            if (span_f64(VS(key), VE(key), &F64(c)[i]) < 0)
                return -1;
            SETV(c);
        }
    }
    static const int HKEY[][2] = {{K_MA, EV_MAC_DUR}, {K_MD, EV_MAC_DST}, {K_MS, EV_MAC_SRC}, {K_MT, EV_MAC_TYPE}};
    for (int k = 0; k < 4; k++) {
        int key = HKEY[k][0], c = HKEY[k][1];
        if (!HAS(key)) {
            if (c == EV_MAC_TYPE)
                NULL32(c);
            else
                NULL64(c);
        } else {
            if (span_hex(VS(key), VE(key), c == EV_MAC_TYPE ? INT32_MAX : INT64_MAX, &v) < 0)
                return -1;
            if (c == EV_MAC_TYPE)
                I32(c)[i] = (int32_t)v;
            else
                I64(c)[i] = v;
            SETV(c);
        }
    }
    static const int AKEY[][3] = {{K_IS, EV_SRC_NODE, EV_SRC_PORT}, {K_ID, EV_DST_NODE, EV_DST_PORT}};
    for (int k = 0; k < 2; k++) {
        int key = AKEY[k][0], cn = AKEY[k][1], cp = AKEY[k][2];
        if (!HAS(key)) {
            NULL32(cn);
            NULL32(cp);
        } else {
            if (span_addr(VS(key), VE(key), &I32(cn)[i], &I32(cp)[i]) < 0)
                return -1;
            SETV(cn);
            SETV(cp);
        }
    }
    /* an IP part must be whole */
    if ((HAS(K_IS) || HAS(K_ID) || HAS(K_II)) && !(HAS(K_IS) && HAS(K_ID) && HAS(K_IL) && HAS(K_II)))
        return -1;
    /* the protocol part: -P and what follows, to the end */
    if (HAS(K_IT)) {
        if (put_dict(o, D_PTYPE, EV_PTYPE, i, VS(K_IT), VE(K_IT) - VS(K_IT)) < 0)
            return -1;
    } else if (ntail > 2 && tok_is(ptail[1], "arp")) {
        if (put_dict(o, D_PTYPE, EV_PTYPE, i, "ARP", 3) < 0) /* ARP lines name no -It */
            return -1;
    } else {
        NULL32(EV_PTYPE);
    }
    int is_tcp = HAS(K_PN) && tok_is(val[K_PN], "tcp");
    int is_cbr = HAS(K_PN) && tok_is(val[K_PN], "cbr");
    NULL64(EV_SEQ);
    NULL64(EV_TCP_ACK);
    NULL32(EV_N_FORWARDS);
    if (is_tcp || is_cbr) {
        int ks = is_tcp ? K_PS : K_PI;
        if (!HAS(ks) || span_i64(VS(ks), VE(ks), &I64(EV_SEQ)[i]) < 0)
            return -1;
        SETV(EV_SEQ);
        if (is_tcp && HAS(K_PA)) {
            if (span_i64(VS(K_PA), VE(K_PA), &I64(EV_TCP_ACK)[i]) < 0)
                return -1;
            SETV(EV_TCP_ACK);
        }
        if (HAS(K_PF)) {
            if (span_i32(VS(K_PF), VE(K_PF), &I32(EV_N_FORWARDS)[i]) < 0)
                return -1;
            SETV(EV_N_FORWARDS);
        }
    } else if (ntail > 0) {
        put_detail(o, i, ptail, 0, ntail);
    }
    /* -Ne >= 0: an energy reading */
    if (HAS(K_NE)) {
        if (span_f64(VS(K_NE), VE(K_NE), &x) < 0)
            return -1;
        if (x >= 0) {
            *energy = x;
            return 1;
        }
    }
#undef HAS
#undef VS
#undef VE
    return 0;
}

/* `M T N (X, Y, Z), (DX, DY), SPEED`: 0, or -1 */
static int move_line(Out *o, Py_ssize_t j, const Tok *tok, int n, int64_t line_no) {
    if (n != 9)
        return -1;
    /* the number inside each token, without its punctuation */
    static const char *pre[9] = {"", "", "", "(", "", "", "(", "", ""};
    static const char *post[9] = {"", "", "", ",", ",", "),", ",", "),", ""};
    const char *s[9], *e[9];
    for (int k = 1; k < 9; k++) {
        size_t a = strlen(pre[k]), b = strlen(post[k]);
        if ((size_t)(tok[k].e - tok[k].s) <= a + b || memcmp(tok[k].s, pre[k], a) != 0 ||
            memcmp(tok[k].e - b, post[k], b) != 0)
            return -1;
        s[k] = tok[k].s + a;
        e[k] = tok[k].e - b;
    }
    ((int64_t *)o->mv[MV_LINE_NO])[j] = line_no;
    if (span_i32(s[2], e[2], &((int32_t *)o->mv[MV_NODE])[j]) < 0)
        return -1;
    static const int col[9] = {0, MV_TIME, 0, MV_X, MV_Y, MV_Z, MV_DX, MV_DY, MV_SPEED};
    for (int k = 1; k < 9; k++)
        if (k != 2 && span_f64(s[k], e[k], &((double *)o->mv[col[k]])[j]) < 0)
            return -1;
    return 0;
}

/* `N -t T -n NODE -e E` (an energy model's line): 0, or -1 */
static int nrg_line(Out *o, const Tok *tok, int n, int64_t line_no) {
    double e[5] = {0}, t;
    int32_t node;
    if (n != 7 || !tok_is(tok[1], "-t") || !tok_is(tok[3], "-n") || !tok_is(tok[5], "-e") ||
        span_f64(tok[2].s, tok[2].e, &t) < 0 || span_i32(tok[4].s, tok[4].e, &node) < 0 ||
        span_f64(tok[6].s, tok[6].e, &e[0]) < 0)
        return -1;
    return add_energy(o, line_no, t, node, e, 0);
}

/* DSR's `S<tag> T [_N_] text` lines: 0, or -1 */
static int log_line(Out *o, const Tok *tok, int n, int64_t line_no) {
    Py_ssize_t k = o->n_lg;
    char c = tok[0].s[1];
    if (k >= o->lg_cap || tok[0].e - tok[0].s < 2 || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'))
        return -1;
    int code = dict_code(&o->dict[D_TAG], tok[0].s, tok[0].e - tok[0].s);
    if (code < 0 || span_f64(tok[1].s, tok[1].e, &((double *)o->lg_col[LG_TIME])[k]) < 0)
        return -1;
    ((int64_t *)o->lg_col[LG_LINE_NO])[k] = line_no;
    ((int32_t *)o->lg_col[LG_TAG])[k] = code;
    /* ` _N_` after the time is the node (the polars parser's _SLINE), the rest is text */
    int t = 2;
    ((int32_t *)o->lg_col[LG_NODE])[k] = 0;
    if (n > 2 && tok[2].e - tok[2].s >= 3 && tok[2].s[0] == '_' && tok[2].e[-1] == '_' &&
        loose_int(tok[2].s + 1, tok[2].e - 1)) {
        if (span_i32(tok[2].s + 1, tok[2].e - 1, &((int32_t *)o->lg_col[LG_NODE])[k]) < 0)
            return -1;
        o->lg_valid[LG_NODE][k >> 3] |= (uint8_t)(1u << (k & 7));
        t = 3;
    }
    int64_t *off = (int64_t *)o->lg_col[LG_TEXT];
    off[k + 1] = o->lg_text_len;
    if (n > t) {
        off[k + 1] = put_text(o->lg_text, &o->lg_text_len, tok, t, n);
        o->lg_valid[LG_TEXT][k >> 3] |= (uint8_t)(1u << (k & 7));
    }
    o->n_lg++;
    return 0;
}

/* The tokens of the line at p: printable ASCII ('!' .. '~'), separated by runs of blanks
 * (' ', '\t'), none before the first. Their number (-1: more than MAX_TOK), and in *stop
 * the first byte after them and the blanks after them, where the line must end ("\r\n" or
 * "\n"; anything else there, the caller declines). A blank first: no tokens. (A range
 * test, not a table of byte classes: one load less in the loop's chain. Bitmaps of the
 * line's bytes made with SSE2, a count of trailing zeros per token, were 3-4 % faster
 * overall, not worth their code.) */
static INLINE int tokens(const char *p, Tok *tok, const char **stop) {
    int n = 0;
    const char *q = p;
    for (;;) {
        const char *s = q;
        while ((unsigned char)(*q - 33) < 94)
            q++;
        if (q == s)
            break;
        if (n == MAX_TOK)
            return -1;
        tok[n].s = s;
        tok[n].e = q;
        n++;
        while (*q == ' ' || *q == '\t')
            q++;
    }
    *stop = q;
    return n;
}

/* a new-format line from its tokens: ` -key (\S+)`, the first key token followed by a value
 * (wherever it is) giving the key's value */
static int new_tokens(Out *o, Py_ssize_t i, const Tok *tok, int n, double *energy) {
    Tok val[N_KEYS];
    uint32_t has = 0;
    int tail = -1;
    for (int j = 1; j + 1 < n; j++) {
        int k = key_of(tok[j]);
        if (k >= 0 && !((has >> k) & 1u)) {
            val[k] = tok[j + 1];
            has |= 1u << k;
            if (k == K_P)
                tail = j;
        }
    }
    return tail < 0 ? new_line(o, i, val, has, NULL, 0, energy) : new_line(o, i, val, has, tok + tail, n - tail, energy);
}

/* ns-2's own layout of a new-format line (cmu-trace.cc): after `E -t T`, the keys below in
 * this order, each with its value, one blank between tokens; then either the end of the
 * line, or the IP keys and then the rest. KEY_NONE: a key the parser does not read. */
#define KEY_NONE (-1)
static const struct {
    char name[4];
    int key;
} LAYOUT_NODE[] = {{"-Hs", KEY_NONE}, {"-Hd", K_HD}, {"-Ni", K_NI}, {"-Nx", K_NX}, {"-Ny", K_NY}, {"-Nz", K_NZ},
                   {"-Ne", K_NE},     {"-Nl", K_NL}, {"-Nw", K_NW}, {"-Ma", K_MA}, {"-Md", K_MD}, {"-Ms", K_MS},
                   {"-Mt", K_MT}},
  LAYOUT_IP[] = {{"-Is", K_IS}, {"-Id", K_ID}, {"-It", K_IT}, {"-Il", K_IL}, {"-If", K_IF}, {"-Ii", K_II}, {"-Iv", K_IV}};

#define NOT_LAID_OUT (-2)

/* the value token at *q (printable ASCII, then one blank): its span, *q moved past the blank;
 * 0, or -1 (none, another byte after it, or a token the key scan would take for a key) */
static INLINE int laid_value(const char **q, Tok *v) {
    const char *s = *q, *e = s;
    while ((unsigned char)(*e - 33) < 94)
        e++;
    if (e == s || *e != ' ')
        return -1;
    v->s = s;
    v->e = e;
    if (*s == '-' && e - s <= 3 && e - s >= 2 && key_of(*v) >= 0)
        return -1;
    *q = e + 1;
    return 0;
}

/* `name ` at q (name: three printable bytes; the comparison stops at the line's "\n", which
 * the data ends with) */
static INLINE int laid_key(const char *q, const char *name) {
    return q[0] == name[0] && q[1] == name[1] && q[2] == name[2] && q[3] == ' ';
}

/* A new-format line at p (`E -t `, E one of s r f d D) read without tokenising all of it
 * first, where it is in ns-2's own layout (LAYOUT_*: the values each key's scan in
 * new_tokens finds are then the ones after the keys here, no value being a key): what
 * new_tokens would return, with *nl the line's "\n"; or NOT_LAID_OUT (nothing written: the
 * caller reads the line from its tokens). */
static INLINE int new_laid_out(Out *o, Py_ssize_t i, const char *p, const char **nl, double *energy) {
    Tok val[N_KEYS];
    uint32_t has = 1u << K_T;
    const char *q = p + 5;
    int n = 3; /* tokens: E -t T */
    if (laid_value(&q, &val[K_T]) < 0)
        return NOT_LAID_OUT;
    for (size_t k = 0; k < sizeof LAYOUT_NODE / sizeof LAYOUT_NODE[0]; k++) {
        Tok v;
        if (!laid_key(q, LAYOUT_NODE[k].name))
            return NOT_LAID_OUT;
        q += 4;
        if (laid_value(&q, &v) < 0)
            return NOT_LAID_OUT;
        if (LAYOUT_NODE[k].key != KEY_NONE) {
            val[LAYOUT_NODE[k].key] = v;
            has |= 1u << LAYOUT_NODE[k].key;
        }
    }
    n += 2 * (int)(sizeof LAYOUT_NODE / sizeof LAYOUT_NODE[0]);
    if (laid_key(q, "-Is")) {
        for (size_t k = 0; k < sizeof LAYOUT_IP / sizeof LAYOUT_IP[0]; k++) {
            if (!laid_key(q, LAYOUT_IP[k].name))
                return NOT_LAID_OUT;
            q += 4;
            if (laid_value(&q, &val[LAYOUT_IP[k].key]) < 0)
                return NOT_LAID_OUT;
            has |= 1u << LAYOUT_IP[k].key;
        }
        n += 2 * (int)(sizeof LAYOUT_IP / sizeof LAYOUT_IP[0]);
    }
    /* the rest: the keys not seen yet, as the key scan finds them (anything odd about the
     * line's end or its length, a second blank here among them: its tokens decide) */
    Tok tok[MAX_TOK];
    const char *stop;
    int nt = tokens(q, tok, &stop);
    if (nt < 0 || n + nt > MAX_TOK)
        return NOT_LAID_OUT;
    if (*stop == '\r')
        stop++;
    if (*stop != '\n')
        return NOT_LAID_OUT;
    *nl = stop;
    int tail = -1;
    for (int j = 0; j + 1 < nt; j++) {
        int k = key_of(tok[j]);
        if (k >= 0 && !((has >> k) & 1u)) {
            val[k] = tok[j + 1];
            has |= 1u << k;
            if (k == K_P)
                tail = j;
        }
    }
    return tail < 0 ? new_line(o, i, val, has, NULL, 0, energy) : new_line(o, i, val, has, tok + tail, nt - tail, energy);
}

/* 0 on success; -1: not a chunk for the fast path */
static int parse_all(const char *data, Py_ssize_t size, int64_t first_line_no, Out *o, Py_ssize_t *n_ev,
                     Py_ssize_t *n_mv) {
    const char *p = data, *end = data + size;
    Py_ssize_t i = 0, j = 0;
    int64_t line_no = first_line_no;
    Tok tok[MAX_TOK];
    I64(EV_DETAIL)[0] = 0;
    while (p < end) {
        char c = p[0];
        if ((c == 's' || c == 'r' || c == 'f' || c == 'd' || c == 'D') && p[1] == ' ' && p[2] == '-' && p[3] == 't' &&
            p[4] == ' ') {
            /* most lines of a new-format trace: in ns-2's own layout, read as they come */
            I64(EV_LINE_NO)[i] = line_no;
            I64(EV_DETAIL)[i + 1] = o->detail_len;
            if (put_dict(o, D_FMT, EV_FMT, i, "new", 3) < 0 || put_dict(o, D_EVENT, EV_EVENT, i, c == 'D' ? "d" : p, 1) < 0)
                return -1;
            double e[5] = {0};
            const char *nl;
            int rc = new_laid_out(o, i, p, &nl, &e[0]);
            if (rc != NOT_LAID_OUT) {
                if (rc < 0)
                    return -1;
                if (rc == 1 && add_energy(o, line_no, F64(EV_TIME)[i], I32(EV_NODE)[i], e, 0) < 0)
                    return -1;
                i++;
                line_no++;
                p = nl + 1;
                continue;
            }
        }
        const char *q;
        int n = tokens(p, tok, &q);
        if (n < 0)
            return -1;
        if (*q == '\r')
            q++;
        if (*q != '\n')
            return -1; /* a control byte, one above 127, a blank first */
        const char *nl = q;
        if (n < 2)
            return -1; /* blank (or a lone word): the polars parser */
        c = tok[0].s[0];
        if (c == 'S') {
            if (log_line(o, tok, n, line_no) < 0)
                return -1;
        } else if (tok[0].e - tok[0].s != 1) {
            return -1;
        } else if (c == 'M') {
            if (j >= o->mv_cap || move_line(o, j, tok, n, line_no) < 0)
                return -1;
            j++;
        } else if (c == 'N') {
            if (nrg_line(o, tok, n, line_no) < 0)
                return -1;
        } else if (c == 's' || c == 'r' || c == 'f' || c == 'd' || c == 'D') {
            I64(EV_LINE_NO)[i] = line_no;
            I64(EV_DETAIL)[i + 1] = o->detail_len; /* NULL unless put_detail sets it */
            int is_new = tok_is(tok[1], "-t");
            if (put_dict(o, D_FMT, EV_FMT, i, is_new ? "new" : "old", 3) < 0)
                return -1;
            if (put_dict(o, D_EVENT, EV_EVENT, i, c == 'D' ? "d" : tok[0].s, 1) < 0)
                return -1;
            double e[5] = {0};
            int rc;
            if (is_new)
                rc = n < 3 ? -1 : new_tokens(o, i, tok, n, &e[0]);
            else
                rc = old_line(o, i, tok, n, e);
            if (rc < 0)
                return -1;
            if (rc == 1 && add_energy(o, line_no, F64(EV_TIME)[i], I32(EV_NODE)[i], e, !is_new) < 0)
                return -1;
            i++;
        } else {
            return -1;
        }
        line_no++;
        p = nl + 1;
    }
    *n_ev = i;
    *n_mv = j;
    return 0;
}

static PyObject *dict_list(Dict *d) {
    PyObject *lst = PyList_New(d->n);
    if (!lst)
        return NULL;
    for (int k = 0; k < d->n; k++) {
        PyObject *s = PyUnicode_DecodeASCII(d->s[k], d->len[k], NULL);
        if (!s) {
            Py_DECREF(lst);
            return NULL;
        }
        PyList_SET_ITEM(lst, k, s);
    }
    return lst;
}

/* (n, (buffer per column..., [text]), (validity per column or None...)) of a small table
 * whose columns are raw arrays: copied into bytes */
static PyObject *small_table(Py_ssize_t n, int ncol, const int *width, char *const *col, uint8_t *const *valid,
                             const char *text, Py_ssize_t text_len) {
    PyObject *bufs = PyTuple_New(ncol + (text != NULL)), *vals = PyTuple_New(ncol);
    if (!bufs || !vals)
        goto error;
    for (int c = 0; c < ncol; c++) {
        /* a string column's offsets: n + 1 of them */
        Py_ssize_t len = (n + (text != NULL && c == ncol - 1)) * width[c];
        PyObject *b = PyBytes_FromStringAndSize(n ? col[c] : "", n ? len : 0);
        if (!b)
            goto error;
        PyTuple_SET_ITEM(bufs, c, b);
        PyObject *v = valid && valid[c] && n ? PyBytes_FromStringAndSize((const char *)valid[c], (n + 7) / 8) : Py_None;
        if (!v)
            goto error;
        if (v == Py_None)
            Py_INCREF(v);
        PyTuple_SET_ITEM(vals, c, v);
    }
    if (text) {
        PyObject *b = PyBytes_FromStringAndSize(text, text_len);
        if (!b)
            goto error;
        PyTuple_SET_ITEM(bufs, ncol, b);
    }
    return Py_BuildValue("(nNN)", n, bufs, vals);
error:
    Py_XDECREF(bufs);
    Py_XDECREF(vals);
    return NULL;
}

static PyObject *parse_wireless(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    long long first_line_no;
    if (!PyArg_ParseTuple(args, "y*L", &buf, &first_line_no))
        return NULL;
    const char *data = (const char *)buf.buf;
    Py_ssize_t size = buf.len;
    PyObject *ev_cols[N_EV] = {NULL}, *ev_valid[N_EV] = {NULL}, *detail = NULL, *mv_cols[N_MV] = {NULL};
    PyObject *ev = NULL, *mv = NULL, *en = NULL, *lg = NULL, *dicts = NULL, *result = NULL;
    Out o;
    memset(&o, 0, sizeof o);
    int fallback = 0;
    if (size == 0 || size > INT32_MAX || data[size - 1] != '\n') {
        fallback = 1;
        goto done;
    }
    /* lines, and lines starting with 'M', 'S' */
    Py_ssize_t n = 0, n_m = 0, n_s = 0;
    Py_BEGIN_ALLOW_THREADS
    for (const char *q = data, *end = data + size; q < end;) {
        const char *nl = memchr(q, '\n', end - q);
        n++;
        n_m += *q == 'M';
        n_s += *q == 'S';
        q = nl + 1;
    }
    Py_END_ALLOW_THREADS
    for (int c = 0; c < N_EV; c++) {
        ev_cols[c] = PyBytes_FromStringAndSize(NULL, (n + (c == EV_DETAIL)) * EV_WIDTH[c]);
        if (!ev_cols[c])
            goto done;
        o.col[c] = PyBytes_AS_STRING(ev_cols[c]);
        if (!EV_NOTNULL[c]) {
            ev_valid[c] = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
            if (!ev_valid[c])
                goto done;
            o.valid[c] = (uint8_t *)PyBytes_AS_STRING(ev_valid[c]);
            memset(o.valid[c], 0, (n + 7) / 8);
        }
    }
    detail = PyBytes_FromStringAndSize(NULL, size);
    if (!detail)
        goto done;
    o.detail = PyBytes_AS_STRING(detail);
    for (int c = 0; c < N_MV; c++) {
        mv_cols[c] = PyBytes_FromStringAndSize(NULL, n_m * MV_WIDTH[c] + 1);
        if (!mv_cols[c])
            goto done;
        o.mv[c] = PyBytes_AS_STRING(mv_cols[c]);
    }
    o.mv_cap = n_m;
    o.en_cap = n;
    if (n_s) {
        /* the log columns, two bitmaps and the text, in one zeroed block */
        size_t bytes = (size_t)size + 2 * (size_t)((n_s + 7) / 8) + 4;
        for (int c = 0; c < N_LG; c++)
            bytes += (size_t)(n_s + 1) * LG_WIDTH[c];
        if (!(o.lg = PyMem_RawCalloc(bytes, 1))) {
            PyErr_NoMemory();
            goto done;
        }
        char *q = o.lg;
        for (int c = 0; c < N_LG; c++) {
            o.lg_col[c] = q;
            q += (n_s + 1) * LG_WIDTH[c];
        }
        o.lg_valid[LG_NODE] = (uint8_t *)q;
        o.lg_valid[LG_TEXT] = (uint8_t *)q + (n_s + 7) / 8;
        o.lg_text = q + 2 * ((n_s + 7) / 8);
        o.lg_cap = n_s;
    }
    Py_ssize_t n_ev = 0, n_mv = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = parse_all(data, size, (int64_t)first_line_no, &o, &n_ev, &n_mv);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        fallback = 1;
        goto done;
    }
    /* events: (n, buffers, validity), the buffers ending with detail's characters */
    PyObject *bufs = PyTuple_New(N_EV + 1), *valid = PyTuple_New(N_EV);
    if (!bufs || !valid || _PyBytes_Resize(&detail, o.detail_len) < 0) {
        Py_XDECREF(bufs);
        Py_XDECREF(valid);
        goto done;
    }
    for (int c = 0; c < N_EV; c++) {
        PyTuple_SET_ITEM(bufs, c, ev_cols[c]);
        ev_cols[c] = NULL;
        PyObject *v = ev_valid[c] ? ev_valid[c] : Py_None;
        if (!ev_valid[c])
            Py_INCREF(Py_None);
        PyTuple_SET_ITEM(valid, c, v);
        ev_valid[c] = NULL;
    }
    PyTuple_SET_ITEM(bufs, N_EV, detail);
    detail = NULL;
    if (!(ev = Py_BuildValue("(nNN)", n_ev, bufs, valid)))
        goto done;
    /* movements: (n, buffers) */
    PyObject *mvb = PyTuple_New(N_MV);
    if (!mvb)
        goto done;
    for (int c = 0; c < N_MV; c++) {
        PyTuple_SET_ITEM(mvb, c, mv_cols[c]);
        mv_cols[c] = NULL;
    }
    if (!(mv = Py_BuildValue("(nN)", n_mv, mvb)))
        goto done;
    uint8_t *en_valid[N_EN] = {NULL, NULL, NULL, NULL, o.en_valid, o.en_valid, o.en_valid, o.en_valid};
    if (!(en = small_table(o.n_en, N_EN, EN_WIDTH, o.en_col, en_valid, NULL, 0)))
        goto done;
    if (!(lg = small_table(o.n_lg, N_LG, LG_WIDTH, o.lg_col, o.lg_valid, o.lg_text ? o.lg_text : "", o.lg_text_len)))
        goto done;
    if (!(dicts = PyTuple_New(N_DICTS)))
        goto done;
    for (int k = 0; k < N_DICTS; k++) {
        PyObject *lst = dict_list(&o.dict[k]);
        if (!lst)
            goto done;
        PyTuple_SET_ITEM(dicts, k, lst);
    }
    result = PyTuple_Pack(5, ev, mv, en, lg, dicts);
done:
    for (int c = 0; c < N_EV; c++) {
        Py_XDECREF(ev_cols[c]);
        Py_XDECREF(ev_valid[c]);
    }
    for (int c = 0; c < N_MV; c++)
        Py_XDECREF(mv_cols[c]);
    Py_XDECREF(detail);
    Py_XDECREF(ev);
    Py_XDECREF(mv);
    Py_XDECREF(en);
    Py_XDECREF(lg);
    Py_XDECREF(dicts);
    PyMem_RawFree(o.en);
    PyMem_RawFree(o.lg);
    PyBuffer_Release(&buf);
    if (fallback)
        Py_RETURN_NONE;
    return result; /* NULL (an exception set) on error */
}

static PyMethodDef methods[] = {
    {"parse_wireless", parse_wireless, METH_VARARGS,
     "parse_wireless(data, first_line_no) -> None | (events, movements, energy, logs, dicts): see the module source"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wirelessc",
                                    "The wireless parser's fast path (C); see tracekit/formats/parsers/wireless.py", -1,
                                    methods};

PyMODINIT_FUNC PyInit__wirelessc(void) {
    memset(KEY3, -1, sizeof KEY3);
    for (size_t k = 0; k < sizeof KEYS3 / sizeof KEYS3[0]; k++)
        KEY3[(unsigned char)KEYS3[k].name[0]][(unsigned char)KEYS3[k].name[1]] = (signed char)KEYS3[k].key;
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c_locale)
        return PyErr_NoMemory();
    return PyModule_Create(&module);
}
