/* The fast path of the wired parser (tracekit/formats/parsers/wired.py): ns-2's fixed wired fields
 * straight into column buffers, in one pass over a chunk of complete lines.
 *
 * It accepts only chunks whose every line is a well-formed 12- or 16-field event line in
 * the plain form ns-2 prints (event + - r d e h, numbers without '+' or leading zeros,
 * flat node.port addresses, hex TCP flags as 0x.., packet types and flags in printable
 * ASCII). Anything else in the chunk -- a blank, '#' or 'v' line, a malformed line, a number
 * outside that plain form, a control byte or one above 127 -- and parse_wired returns None:
 * the caller parses the chunk with the polars parser, which explains bad lines. So this file decides nothing the polars parser does not; it
 * only gives the same columns faster (tests/test_parsers_fast.py compares the two).
 *
 * normalize_ws(data: bytes) -> bytes, at the end, is tracekit.formats.parsers.normalize_ws in C.
 * count_lines(data: bytes) -> int is data.count(b"\n"), faster (TraceSource.chunks' count).
 *
 * parse_wired(data: bytes, first_line_no: int) -> None | (n_rows, n_hdr, buffers, dicts)
 *   buffers: one bytes object per column, in the order of COLS below (little-endian
 *            values; the dictionary columns as int32 codes), then the validity bitmap of
 *            the four show_tcphdr_ columns (Arrow layout: bit i of byte i/8 set on 16-field lines)
 *   dicts:   (event values, ptype values, flags values), lists of str, code order
 * The GIL is released while parsing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum {
    C_LINE_NO, C_EVENT, C_TIME, C_FROM, C_TO, C_PTYPE, C_SIZE, C_FLAGS, C_FID,
    C_SRC_NODE, C_SRC_PORT, C_DST_NODE, C_DST_PORT, C_SEQ, C_PKT_ID,
    C_ACKNO, C_TFLAGS, C_HLEN, C_SACK, N_COLS
};
static const int WIDTH[N_COLS] = {8, 4, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8, 8, 4, 4, 4};

#define MAX_DICT 64

typedef struct {
    const char *s[MAX_DICT];
    Py_ssize_t len[MAX_DICT];
    int n;
    int last;
} Dict;

static locale_t c_locale;

/* the words of d, by code, as a new list of str; NULL with an exception set */
static PyObject *dict_words(const Dict *d) {
    PyObject *lst = PyList_New(d->n);
    if (!lst)
        return NULL;
    for (int j = 0; j < d->n; j++) {
        PyObject *str = PyUnicode_DecodeASCII(d->s[j], d->len[j], NULL);
        if (!str) {
            Py_DECREF(lst);
            return NULL;
        }
        PyList_SET_ITEM(lst, j, str);
    }
    return lst;
}

/* the code of string s[0:len] in d, adding it; -1 when d is full */
static inline int dict_code(Dict *d, const char *s, Py_ssize_t len) {
    if (d->n && d->len[d->last] == len && memcmp(d->s[d->last], s, len) == 0)
        return d->last;
    for (int i = 0; i < d->n; i++) {
        if (d->len[i] == len && memcmp(d->s[i], s, len) == 0) {
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

/* A field: p points at its first byte; it ends at ' ' or '\n'. Each parser advances *pp to
 * the terminator and returns 0 on success, -1 when the field is not in the plain form. */

/* -?D+ without a leading zero (nor "-0"), at most max_digits (<= 19: fits uint64) digits,
 * within [lo, hi] */
static inline int parse_int(const char **pp, int64_t *out, int max_digits, int64_t lo, int64_t hi) {
    const char *p = *pp;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    const char *d0 = p;
    uint64_t v = 0;
    while ((unsigned)(*p - '0') < 10) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
    }
    int nd = (int)(p - d0);
    if (nd == 0 || nd > max_digits || (*d0 == '0' && (nd > 1 || neg)) || (*p != ' ' && *p != '\n'))
        return -1;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1 || -(int64_t)(v - 1) - 1 < lo)
            return -1;
        *out = -(int64_t)(v - 1) - 1;
    } else {
        if (v > (uint64_t)hi)
            return -1;
        *out = (int64_t)v;
    }
    *pp = p;
    return 0;
}

static inline int parse_i32(const char **pp, int32_t *out) {
    int64_t v;
    if (parse_int(pp, &v, 10, INT32_MIN, INT32_MAX) < 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

static inline int parse_i64(const char **pp, int64_t *out) {
    return parse_int(pp, out, 19, INT64_MIN, INT64_MAX);
}

static const double POW10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* -?D+(.D*)?([eE][-+]?D+)? without a leading zero before another digit; correctly rounded
 * (exact fast path when the digits fit 2^53 and the power of ten is exact, else strtod_l) */
static inline int parse_f64(const char **pp, double *out) {
    const char *start = *pp, *p = start;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    const char *d0 = p;
    uint64_t m = 0;
    int nd = 0, frac = 0;
    while ((unsigned)(*p - '0') < 10) {
        m = m * 10 + (uint64_t)(*p - '0');
        p++;
        nd++;
    }
    if (nd == 0 || (nd > 1 && *d0 == '0'))
        return -1;
    if (*p == '.') {
        p++;
        if ((unsigned)(*p - '0') >= 10)
            return -1; /* "1." */
        while ((unsigned)(*p - '0') < 10) {
            m = m * 10 + (uint64_t)(*p - '0');
            p++;
            nd++;
            frac++;
        }
    }
    int e = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '-' || *p == '+') {
            eneg = *p == '-';
            p++;
        }
        int ne = 0;
        while ((unsigned)(*p - '0') < 10) {
            if (ne < 6)
                e = e * 10 + (*p - '0');
            p++;
            ne++;
        }
        if (ne == 0 || ne > 5)
            return -1;
        if (eneg)
            e = -e;
    }
    if (*p != ' ' && *p != '\n')
        return -1;
    double v;
    int k = e - frac;
    if (nd <= 15 && k >= -22 && k <= 22) {
        v = (double)m;
        v = k < 0 ? v / POW10[-k] : v * POW10[k];
        if (neg)
            v = -v;
    } else {
        char buf[64];
        Py_ssize_t len = p - start;
        if (len >= (Py_ssize_t)sizeof buf)
            return -1;
        memcpy(buf, start, len);
        buf[len] = 0;
        v = strtod_l(buf, NULL, c_locale);
    }
    if (!isfinite(v))
        return -1;
    *out = v;
    *pp = p;
    return 0;
}

static inline int parse_addr(const char **pp, int32_t *node, int32_t *port) {
    const char *p = *pp;
    /* node digits up to '.', then port; a second '.' fails parse_i32's terminator check */
    const char *dot = p;
    while (*dot != '.' && *dot != ' ' && *dot != '\n')
        dot++;
    if (*dot != '.')
        return -1;
    /* parse_int needs a ' ' or '\n' terminator: check the node part by hand */
    const char *q = p;
    int neg = 0;
    if (*q == '-') {
        neg = 1;
        q++;
    }
    int nd = (int)(dot - q);
    if (nd == 0 || nd > 10 || (nd > 1 && *q == '0') || (neg && nd == 1 && *q == '0'))
        return -1;
    int64_t v = 0;
    for (; q < dot; q++) {
        if ((unsigned)(*q - '0') >= 10)
            return -1;
        v = v * 10 + (*q - '0');
    }
    if (neg)
        v = -v;
    if (v < INT32_MIN || v > INT32_MAX)
        return -1;
    *node = (int32_t)v;
    p = dot + 1;
    if (parse_i32(&p, port) < 0)
        return -1;
    *pp = p;
    return 0;
}

static inline int parse_hex(const char **pp, int32_t *out) {
    const char *p = *pp;
    if (p[0] != '0' || p[1] != 'x')
        return -1;
    p += 2;
    int nd = 0;
    uint32_t v = 0;
    for (;; p++, nd++) {
        unsigned c = (unsigned char)*p;
        if (c - '0' < 10)
            v = v * 16 + (c - '0');
        else if (c - 'a' < 6)
            v = v * 16 + (c - 'a' + 10);
        else if (c - 'A' < 6)
            v = v * 16 + (c - 'A' + 10);
        else
            break;
    }
    if (nd == 0 || nd > 7 || (*p != ' ' && *p != '\n'))
        return -1;
    *out = (int32_t)v;
    *pp = p;
    return 0;
}

/* a string field (ptype, flags): non-empty, printable ASCII (no control byte such as '\r'
 * or NUL, no byte above 127: those chunks go to the polars parser), up to the next ' ' */
static inline int parse_word(const char **pp, const char **s, Py_ssize_t *len) {
    const char *p = *pp;
    const char *q = p;
    while ((unsigned char)(*q - 33) < 94) /* '!' .. '~' */
        q++;
    if (q == p || *q != ' ')
        return -1;
    *s = p;
    *len = q - p;
    *pp = q;
    return 0;
}

#define SEP(p)            \
    do {                  \
        if (*(p) != ' ')  \
            goto bad;     \
        (p)++;            \
    } while (0)

/* 0 on success; -1: not a chunk for the fast path */
static int parse_all(const char *data, Py_ssize_t size, Py_ssize_t n, int64_t first_line_no, char **col,
                     uint8_t *valid, Py_ssize_t *n_hdr_out, Dict *ev, Dict *pt, Dict *fl) {
    const char *p = data, *end = data + size;
    Py_ssize_t i = 0, n_hdr = 0;
    int64_t *line_no = (int64_t *)col[C_LINE_NO];
    int32_t *event = (int32_t *)col[C_EVENT];
    double *tm = (double *)col[C_TIME];
    int32_t *from = (int32_t *)col[C_FROM], *to = (int32_t *)col[C_TO];
    int32_t *ptype = (int32_t *)col[C_PTYPE], *sz = (int32_t *)col[C_SIZE];
    int32_t *flags = (int32_t *)col[C_FLAGS], *fid = (int32_t *)col[C_FID];
    int32_t *sn = (int32_t *)col[C_SRC_NODE], *sp = (int32_t *)col[C_SRC_PORT];
    int32_t *dn = (int32_t *)col[C_DST_NODE], *dp = (int32_t *)col[C_DST_PORT];
    int64_t *seq = (int64_t *)col[C_SEQ], *pid = (int64_t *)col[C_PKT_ID];
    int64_t *ack = (int64_t *)col[C_ACKNO];
    int32_t *tfl = (int32_t *)col[C_TFLAGS], *hlen = (int32_t *)col[C_HLEN], *sack = (int32_t *)col[C_SACK];
    const char *s;
    Py_ssize_t len;
    while (p < end) {
        if (i == n) /* never past the buffers (n is counted by newlines(), so never met) */
            goto bad;
        char c = *p;
        if (c != '+' && c != '-' && c != 'r' && c != 'd' && c != 'e' && c != 'h')
            goto bad;
        if (p[1] != ' ')
            goto bad;
        int code = dict_code(ev, p, 1);
        if (code < 0)
            goto bad;
        event[i] = code;
        p += 2;
        line_no[i] = first_line_no + i;
        if (parse_f64(&p, &tm[i]) < 0) goto bad;
        SEP(p);
        if (parse_i32(&p, &from[i]) < 0) goto bad;
        SEP(p);
        if (parse_i32(&p, &to[i]) < 0) goto bad;
        SEP(p);
        if (parse_word(&p, &s, &len) < 0 || (code = dict_code(pt, s, len)) < 0) goto bad;
        ptype[i] = code;
        SEP(p);
        if (parse_i32(&p, &sz[i]) < 0) goto bad;
        SEP(p);
        if (parse_word(&p, &s, &len) < 0 || (code = dict_code(fl, s, len)) < 0) goto bad;
        flags[i] = code;
        SEP(p);
        if (parse_i32(&p, &fid[i]) < 0) goto bad;
        SEP(p);
        if (parse_addr(&p, &sn[i], &sp[i]) < 0) goto bad;
        SEP(p);
        if (parse_addr(&p, &dn[i], &dp[i]) < 0) goto bad;
        SEP(p);
        if (parse_i64(&p, &seq[i]) < 0) goto bad;
        SEP(p);
        if (parse_i64(&p, &pid[i]) < 0) goto bad;
        if (*p == '\n') {
            ack[i] = 0;
            tfl[i] = hlen[i] = sack[i] = 0;
        } else {
            SEP(p);
            if (parse_i64(&p, &ack[i]) < 0) goto bad;
            SEP(p);
            if (parse_hex(&p, &tfl[i]) < 0) goto bad;
            SEP(p);
            if (parse_i32(&p, &hlen[i]) < 0) goto bad;
            SEP(p);
            if (parse_i32(&p, &sack[i]) < 0) goto bad;
            if (*p != '\n') goto bad;
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
            n_hdr++;
        }
        p++; /* the newline */
        i++;
    }
    if (i != n)
        goto bad;
    *n_hdr_out = n_hdr;
    return 0;
bad:
    return -1;
}

/* the number of '\n' bytes in p[0:size]: 16 bytes at a time where SSE2 is (every x86-64),
 * counted in 16 byte-wide counters (a match is -1: subtracted) summed every 255 steps, before
 * one can overflow (not a popcount per step: without -mpopcnt that is a call into libgcc) */
static Py_ssize_t newlines(const char *p, Py_ssize_t size) {
    Py_ssize_t n = 0, i = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 16 <= size) {
        __m128i counts = zero;
        for (int k = 0; k < 255 && i + 16 <= size; k++, i += 16)
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), nl));
        __m128i sums = _mm_sad_epu8(counts, zero); /* two 64-bit sums of 8 counters each */
        n += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums)); /* each < 2^20 */
    }
#endif
    for (; i < size; i++)
        n += p[i] == '\n';
    return n;
}

/* count_lines(data) -> int: data.count(b"\n"), without the GIL, 4-5 x faster */
static PyObject *count_lines(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    Py_ssize_t n;
    Py_BEGIN_ALLOW_THREADS
    n = newlines((const char *)buf.buf, buf.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(n);
}

static PyObject *parse_wired(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    long long first_line_no;
    if (!PyArg_ParseTuple(args, "y*L", &buf, &first_line_no))
        return NULL;
    const char *data = (const char *)buf.buf;
    Py_ssize_t size = buf.len;
    PyObject *result = NULL, *cols[N_COLS + 1] = {NULL};
    if (size == 0 || data[size - 1] != '\n')
        goto fallback;
    Py_ssize_t n;
    Py_BEGIN_ALLOW_THREADS
    n = newlines(data, size);
    Py_END_ALLOW_THREADS
    char *colp[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        cols[c] = PyBytes_FromStringAndSize(NULL, n * WIDTH[c]);
        if (!cols[c])
            goto error;
        colp[c] = PyBytes_AS_STRING(cols[c]);
    }
    cols[N_COLS] = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
    if (!cols[N_COLS])
        goto error;
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(cols[N_COLS]);
    memset(valid, 0, (n + 7) / 8);
    Dict ev = {0}, pt = {0}, fl = {0};
    Py_ssize_t n_hdr = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = parse_all(data, size, n, (int64_t)first_line_no, colp, valid, &n_hdr, &ev, &pt, &fl);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        goto fallback;
    PyObject *bufs = PyTuple_New(N_COLS + 1);
    if (!bufs)
        goto error;
    for (int c = 0; c <= N_COLS; c++) {
        PyTuple_SET_ITEM(bufs, c, cols[c]);
        cols[c] = NULL;
    }
    Dict *dicts[3] = {&ev, &pt, &fl};
    PyObject *dl = PyTuple_New(3);
    if (!dl) {
        Py_DECREF(bufs);
        goto error;
    }
    for (int k = 0; k < 3; k++) {
        PyObject *lst = dict_words(dicts[k]);
        if (!lst) {
            Py_DECREF(bufs);
            Py_DECREF(dl);
            goto error;
        }
        PyTuple_SET_ITEM(dl, k, lst);
    }
    result = Py_BuildValue("nnNN", n, n_hdr, bufs, dl);
    PyBuffer_Release(&buf);
    return result;
fallback:
    for (int c = 0; c <= N_COLS; c++)
        Py_XDECREF(cols[c]);
    PyBuffer_Release(&buf);
    Py_RETURN_NONE;
error:
    for (int c = 0; c <= N_COLS; c++)
        Py_XDECREF(cols[c]);
    PyBuffer_Release(&buf);
    return NULL;
}

/* parse_fields(data, first_line_no, spec) -> None | (n_rows, buffers, dicts): a chunk of
 * lines of one fixed shape (the queue monitor's and the TCP variable traces' lines), every
 * line exactly the fields of `spec` (space-separated items: "f" a double, "i" an int32, "I"
 * an int64, "w" a word (dictionary code, uint32; not the last field), "=TEXT" that literal
 * text, not stored) separated by one space and ended by '\n', numbers in the plain forms
 * the wired fast path reads; None for any other chunk (its parser's polars path reads it).
 * buffers: the line numbers (int64), then one buffer per stored field; dicts: the words of
 * each "w" field, by code. */
#define MAX_FIELDS 16
static PyObject *parse_fields(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    long long first_line_no;
    const char *spec;
    if (!PyArg_ParseTuple(args, "y*Ls", &buf, &first_line_no, &spec))
        return NULL;
    char kind[MAX_FIELDS];
    const char *lit[MAX_FIELDS];
    Py_ssize_t litlen[MAX_FIELDS];
    int nf = 0, ncols = 1, nw = 0; /* the line numbers are column 0 */
    for (const char *q = spec; *q;) {
        while (*q == ' ')
            q++;
        if (!*q)
            break;
        const char *e = q;
        while (*e && *e != ' ')
            e++;
        if (nf == MAX_FIELDS) {
            PyBuffer_Release(&buf);
            PyErr_SetString(PyExc_ValueError, "parse_fields: too many fields");
            return NULL;
        }
        if (*q == '=') {
            kind[nf] = '=';
            lit[nf] = q + 1;
            litlen[nf] = e - q - 1;
        } else if (e - q == 1 && (*q == 'f' || *q == 'i' || *q == 'I' || *q == 'w')) {
            kind[nf] = *q;
            ncols++;
            nw += *q == 'w';
        } else {
            PyBuffer_Release(&buf);
            PyErr_SetString(PyExc_ValueError, "parse_fields: bad spec");
            return NULL;
        }
        nf++;
        q = e;
    }
    const char *data = (const char *)buf.buf;
    Py_ssize_t size = buf.len;
    PyObject *cols[MAX_FIELDS + 1] = {NULL};
    Dict dicts[MAX_FIELDS + 1];
    memset(dicts, 0, sizeof dicts);
    if (size == 0 || data[size - 1] != '\n')
        goto fallback;
    Py_ssize_t n;
    Py_BEGIN_ALLOW_THREADS
    n = newlines(data, size);
    Py_END_ALLOW_THREADS
    char *colp[MAX_FIELDS + 1];
    int width[MAX_FIELDS + 1];
    width[0] = 8;
    for (int k = 0, c = 1; k < nf; k++)
        if (kind[k] != '=')
            width[c++] = kind[k] == 'i' || kind[k] == 'w' ? 4 : 8;
    for (int c = 0; c < ncols; c++) {
        cols[c] = PyBytes_FromStringAndSize(NULL, n * width[c]);
        if (!cols[c])
            goto error;
        colp[c] = PyBytes_AS_STRING(cols[c]);
    }
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    const char *p = data, *end = data + size, *s;
    Py_ssize_t i = 0, len;
    while (ok && p < end) {
        if (i == n) {
            ok = 0;
            break;
        }
        ((int64_t *)colp[0])[i] = (int64_t)first_line_no + i;
        for (int k = 0, c = 1; k < nf && ok; k++) {
            if (k > 0) {
                if (*p != ' ') {
                    ok = 0;
                    break;
                }
                p++;
            }
            switch (kind[k]) {
            case '=':
                if (end - p <= litlen[k] || memcmp(p, lit[k], litlen[k]) != 0 || (p[litlen[k]] != ' ' && p[litlen[k]] != '\n'))
                    ok = 0;
                else
                    p += litlen[k];
                continue;
            case 'f':
                ok = parse_f64(&p, &((double *)colp[c])[i]) == 0;
                break;
            case 'i':
                ok = parse_i32(&p, &((int32_t *)colp[c])[i]) == 0;
                break;
            case 'I':
                ok = parse_i64(&p, &((int64_t *)colp[c])[i]) == 0;
                break;
            case 'w': {
                int code = -1;
                ok = parse_word(&p, &s, &len) == 0 && (code = dict_code(&dicts[c], s, len)) >= 0;
                if (ok)
                    ((int32_t *)colp[c])[i] = code;
                break;
            }
            }
            c++;
        }
        if (!ok || *p != '\n') {
            ok = 0;
            break;
        }
        p++;
        i++;
    }
    if (i != n)
        ok = 0;
    Py_END_ALLOW_THREADS
    if (!ok)
        goto fallback;
    PyObject *bufs = PyTuple_New(ncols);
    PyObject *dl = PyTuple_New(nw);
    if (!bufs || !dl) {
        Py_XDECREF(bufs);
        Py_XDECREF(dl);
        goto error;
    }
    for (int c = 0; c < ncols; c++) {
        PyTuple_SET_ITEM(bufs, c, cols[c]);
        cols[c] = NULL;
    }
    for (int k = 0, c = 1, w = 0; k < nf; k++) {
        if (kind[k] == '=')
            continue;
        if (kind[k] == 'w') {
            PyObject *lst = dict_words(&dicts[c]);
            if (!lst) {
                Py_DECREF(bufs);
                Py_DECREF(dl);
                goto error;
            }
            PyTuple_SET_ITEM(dl, w++, lst);
        }
        c++;
    }
    PyBuffer_Release(&buf);
    return Py_BuildValue("nNN", n, bufs, dl);
fallback:
    for (int c = 0; c <= MAX_FIELDS; c++)
        Py_XDECREF(cols[c]);
    PyBuffer_Release(&buf);
    Py_RETURN_NONE;
error:
    for (int c = 0; c <= MAX_FIELDS; c++)
        Py_XDECREF(cols[c]);
    PyBuffer_Release(&buf);
    return NULL;
}

/* normalize_ws(data: bytes) -> bytes: tracekit.formats.parsers.normalize_ws in one pass (the
 * wireless and tcpvar parsers' first step): "\r\n" -> "\n", tabs -> spaces, each run of
 * blanks -> one space, none at the start or end of a line or of the data. */
static PyObject *normalize_ws(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    const char *in = (const char *)buf.buf;
    Py_ssize_t n = buf.len;
    char *out = PyMem_RawMalloc(n ? n : 1);
    if (!out) {
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    Py_ssize_t o = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0;
    while (i < n) {
        char c = in[i];
        if (c == ' ' || c == '\t') {
            Py_ssize_t j = i;
            while (j < n && (in[j] == ' ' || in[j] == '\t'))
                j++;
            /* dropped at the start of the data or of a line, and before a line's end */
            int at_start = o == 0 || out[o - 1] == '\n';
            int at_end = j == n || in[j] == '\n' || (in[j] == '\r' && j + 1 < n && in[j + 1] == '\n');
            if (!at_start && !at_end)
                out[o++] = ' ';
            i = j;
        } else if (c == '\r' && i + 1 < n && in[i + 1] == '\n') {
            i++; /* the '\n' comes next */
        } else {
            out[o++] = c;
            i++;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    PyObject *res = PyBytes_FromStringAndSize(out, o);
    PyMem_RawFree(out);
    return res;
}

static PyMethodDef methods[] = {
    {"normalize_ws", normalize_ws, METH_VARARGS, "normalize_ws(data) -> bytes: see tracekit.formats.parsers.normalize_ws"},
    {"parse_wired", parse_wired, METH_VARARGS,
     "parse_wired(data, first_line_no) -> None | (n_rows, n_hdr, buffers, dicts): see the module source"},
    {"count_lines", count_lines, METH_VARARGS, "count_lines(data) -> int: the number of newline bytes"},
    {"parse_fields", parse_fields, METH_VARARGS,
     "parse_fields(data, first_line_no, spec) -> None | (n_rows, buffers, dicts): see the module source"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wiredc",
                                    "The wired parser's fast path (C); see tracekit/formats/parsers/wired.py", -1, methods};

PyMODINIT_FUNC PyInit__wiredc(void) {
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (!c_locale)
        return PyErr_NoMemory();
    return PyModule_Create(&module);
}
