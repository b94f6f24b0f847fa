/* args.c - argument parsing with every integer range-checked.
 *
 * PyArg_ParseTuple's "I", "K", "k", "B", "H" units keep the low bits of any
 * integer (2**32 + 8 parses as 8, -16 as 2**64 - 16), and its checked units
 * raise without naming the argument. pa_args / pa_args_kw look at each
 * integer unit's object first and raise, naming the parameter and its range:
 *
 *     OverflowError: dst must be in [0, 2^32); got 4294968320
 *     TypeError: dst must be an integer, not float
 *
 * then hand the same arguments to PyArg_VaParse(TupleAndKeywords), which
 * converts them. Non-integer units ("O", "O!", "p", "s", "w*", "y*", ...)
 * are left to CPython; "O!" is type-checked here too so that its error names
 * the parameter.
 */
#include "binding.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

typedef struct {
    char code;          /* the format unit's letter */
    int is_signed;
    int bits;           /* range: [0, 2^bits) or [-2^(bits-1), 2^(bits-1)) */
} int_unit;

static const int_unit int_units[] = {
    {'b', 0, 8},  {'B', 0, 8},  {'h', 1, 16}, {'H', 0, 16}, {'i', 1, 32}, {'I', 0, 32},
    {'l', 1, 64}, {'k', 0, 64}, {'L', 1, 64}, {'K', 0, 64}, {'n', 1, 64},
};

static inline const int_unit *find_int_unit(char c)
{
    switch (c) {   /* called for every unit of every call: no search */
    case 'b': return &int_units[0];
    case 'B': return &int_units[1];
    case 'h': return &int_units[2];
    case 'H': return &int_units[3];
    case 'i': return &int_units[4];
    case 'I': return &int_units[5];
    case 'l': return &int_units[6];
    case 'k': return &int_units[7];
    case 'L': return &int_units[8];
    case 'K': return &int_units[9];
    case 'n': return &int_units[10];
    default: return NULL;
    }
}

int pa_check_int(PyObject *obj, const char *name, int is_signed, int bits)
{
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyLong_CheckExact(obj)) {   /* the common case, without Python arithmetic */
        int overflow = 0;   /* an exact int sets no error here: none is cleared either */
        long long x = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (!overflow && (is_signed ? bits >= 64 || (x >= -(1LL << (bits - 1)) && x < (1LL << (bits - 1)))
                                    : x >= 0 && (bits >= 63 || x < (1LL << bits))))
            return 0;
        /* out of range or too large: the exact check below says so */
    }
    PyObject *v = PyNumber_Index(obj);
    if (!v)
        return -1;
    /* Compare against the bounds as Python integers: exact at any size. */
    PyObject *lo = is_signed ? PyLong_FromLongLong(-(1LL << (bits - 1))) : PyLong_FromLong(0);
    PyObject *one = PyLong_FromLong(1), *sh = PyLong_FromLong(is_signed ? bits - 1 : bits);
    PyObject *hi = one && sh ? PyNumber_Lshift(one, sh) : NULL;
    int rc = -1;
    if (lo && hi) {
        int below = PyObject_RichCompareBool(v, lo, Py_LT);
        int above = below ? 0 : PyObject_RichCompareBool(v, hi, Py_GE);
        if (below < 0 || above < 0) {
            rc = -1;
        } else if (below || above) {
            if (is_signed)
                PyErr_Format(PyExc_OverflowError, "%s must be in [-2^%d, 2^%d); got %S", name, bits - 1,
                             bits - 1, v);
            else
                PyErr_Format(PyExc_OverflowError, "%s must be in [0, 2^%d); got %S", name, bits, v);
        } else {
            rc = 0;
        }
    }
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    Py_XDECREF(one);
    Py_XDECREF(sh);
    Py_DECREF(v);
    return rc;
}

/* The next name of a space-separated list (into buf), advancing *names. */
static const char *next_name(const char **names, char *buf, size_t n)
{
    const char *s = *names;
    while (*s == ' ')
        s++;
    size_t len = strcspn(s, " ");
    if (len == 0)
        return "argument";
    if (len >= n)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    *names = s + strcspn(s, " ");
    return buf;
}

/* Check the units of fmt against the arguments (positional, then keywords by
 * kwlist name). ap walks the same pointers PyArg would, for "O!"'s type.
 * *convert: bit i set when unit i is an integer unit given an object that is
 * no exact int (a NumPy integer, an __index__ object): CPython's "k" and "K"
 * refuse those ("argument 2 must be int, not numpy.int64"), so pa_args hands
 * PyArg their int values instead (as_ints). */
static int precheck(PyObject *args, PyObject *kw, char **kwlist, const char *names, const char *fmt,
                    va_list ap, uint64_t *convert)
{
    Py_ssize_t npos = PyTuple_GET_SIZE(args);
    char buf[64];
    int idx = 0;
    for (const char *f = fmt; *f && *f != ':' && *f != ';'; idx++) {
        if (*f == '|' || *f == '$') {
            f++;
            idx--;
            continue;
        }
        const char *name = kwlist ? (kwlist[idx] ? kwlist[idx] : "argument") : next_name(&names, buf, sizeof buf);
        PyObject *obj = idx < npos ? PyTuple_GET_ITEM(args, idx)
                                   : (kw && kwlist && kwlist[idx] ? PyDict_GetItemString(kw, kwlist[idx]) : NULL);
        char c = *f++;
        const int_unit *u = find_int_unit(c);
        if (u) {
            (void)va_arg(ap, void *);
            if (obj && pa_check_int(obj, name, u->is_signed, u->bits))
                return -1;
            if (obj && !PyLong_CheckExact(obj) && idx < 64)
                *convert |= 1ull << idx;
            continue;
        }
        switch (c) {
        case 'O':
            if (*f == '!') {
                f++;
                PyTypeObject *type = va_arg(ap, PyTypeObject *);
                (void)va_arg(ap, void *);
                if (obj && !PyObject_TypeCheck(obj, type)) {
                    PyErr_Format(PyExc_TypeError, "%s must be %.100s, not %.100s", name, type->tp_name,
                                 Py_TYPE(obj)->tp_name);
                    return -1;
                }
            } else if (*f == '&') {
                PyErr_SetString(PyExc_SystemError, "pa_args: O& is not supported");
                return -1;
            } else {
                (void)va_arg(ap, void *);
            }
            break;
        case 'p': case 'd': case 'f': case 'C': case 'c':
            (void)va_arg(ap, void *);
            break;
        case 's': case 'z': case 'y': case 'w':
            (void)va_arg(ap, void *);
            if (*f == '*')
                f++;
            else if (*f == '#') {
                f++;
                (void)va_arg(ap, void *);
            }
            break;
        default:
            PyErr_Format(PyExc_SystemError, "pa_args: format unit '%c' is not supported", c);
            return -1;
        }
    }
    return 0;
}

/* The arguments with each integer unit that convert names (positional index,
 * or keyword by kwlist name) replaced by its int value: new references in
 * *args2 / *kw2 (kw2 NULL when kw is), or -1. Runs only for such arguments. */
static int as_ints(PyObject *args, PyObject *kw, char **kwlist, uint64_t convert, PyObject **args2,
                   PyObject **kw2)
{
    const Py_ssize_t npos = PyTuple_GET_SIZE(args);
    *args2 = PyTuple_New(npos);
    *kw2 = kw ? PyDict_Copy(kw) : NULL;
    if (!*args2 || (kw && !*kw2))
        goto fail;
    for (Py_ssize_t i = 0; i < npos; i++) {
        PyObject *o = PyTuple_GET_ITEM(args, i);
        PyObject *v = i < 64 && (convert >> i & 1) ? PyNumber_Index(o) : (Py_INCREF(o), o);
        if (!v)
            goto fail;
        PyTuple_SET_ITEM(*args2, i, v);
    }
    for (int i = (int)npos; *kw2 && kwlist && i < 64 && kwlist[i]; i++) {
        PyObject *o = (convert >> i & 1) ? PyDict_GetItemString(*kw2, kwlist[i]) : NULL;
        PyObject *v = o ? PyNumber_Index(o) : NULL;
        if (o && (!v || PyDict_SetItemString(*kw2, kwlist[i], v) < 0)) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_XDECREF(v);
    }
    return 0;
fail:
    Py_CLEAR(*args2);
    Py_CLEAR(*kw2);
    return -1;
}

int pa_args(PyObject *args, const char *names, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    uint64_t convert = 0;
    PyObject *args2 = NULL, *kw2 = NULL;
    int ok = precheck(args, NULL, NULL, names, fmt, ap2, &convert) == 0 &&
             (!convert || as_ints(args, NULL, NULL, convert, &args2, &kw2) == 0) &&
             PyArg_VaParse(args2 ? args2 : args, fmt, ap);
    Py_XDECREF(args2);   /* the ints it holds were checked and copied out, never borrowed */
    va_end(ap2);
    va_end(ap);
    return ok;
}

int pa_args_kw(PyObject *args, PyObject *kw, char **kwlist, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    uint64_t convert = 0;
    PyObject *args2 = NULL, *kw2 = NULL;
    int ok = precheck(args, kw, kwlist, NULL, fmt, ap2, &convert) == 0 &&
             (!convert || as_ints(args, kw, kwlist, convert, &args2, &kw2) == 0) &&
             PyArg_VaParseTupleAndKeywords(args2 ? args2 : args, args2 ? kw2 : kw, fmt, kwlist, ap);
    Py_XDECREF(args2);
    Py_XDECREF(kw2);
    va_end(ap2);
    va_end(ap);
    return ok;
}

/* --- METH_FASTCALL | METH_KEYWORDS ------------------------------------------
 *
 * pa_fast_args is pa_args for the vectorcall convention: the arguments arrive
 * as an array (no tuple, no dict), keywords by name. The units it takes are
 * the integer ones, 'p', 'O' and 'O!'; '|' starts the optional parameters and
 * '$' the keyword-only ones. An exact int in range converts without a Python
 * call; anything else goes through pa_check_int, so the errors are pa_args'.
 */
/* The i-th name of a space-separated list into buf ("argument" if absent). */
static const char *nth_name(const char *names, int i, char *buf, size_t n)
{
    const char *s = names;
    for (int k = 0; k < i && *s; k++)
        next_name(&s, buf, n);
    return next_name(&s, buf, n);
}

static inline void store_int(char code, void *p, long long s, unsigned long long u)
{
    switch (code) {
    case 'b': *(unsigned char *)p = (unsigned char)s; break;   /* as PyArg: 'b' is an unsigned char */
    case 'B': *(unsigned char *)p = (unsigned char)u; break;
    case 'h': *(short *)p = (short)s; break;
    case 'H': *(unsigned short *)p = (unsigned short)u; break;
    case 'i': *(int *)p = (int)s; break;
    case 'I': *(unsigned int *)p = (unsigned int)u; break;
    case 'l': *(long *)p = (long)s; break;
    case 'k': *(unsigned long *)p = (unsigned long)u; break;
    case 'L': *(long long *)p = s; break;
    case 'K': *(unsigned long long *)p = u; break;
    case 'n': *(Py_ssize_t *)p = (Py_ssize_t)s; break;
    }
}

/* The slow side of convert_int: anything but an exact int in range. */
static int convert_int_slow(PyObject *obj, const char *names, int idx, const int_unit *u, void *p)
{
    char buf[64];
    if (pa_check_int(obj, nth_name(names, idx, buf, sizeof buf), u->is_signed, u->bits))
        return -1;
    PyObject *v = PyNumber_Index(obj);   /* in range: the conversions below are exact */
    if (!v)
        return -1;
    long long s = u->is_signed ? PyLong_AsLongLong(v) : 0;
    unsigned long long us = u->is_signed ? 0 : PyLong_AsUnsignedLongLongMask(v);
    Py_DECREF(v);
    if (PyErr_Occurred())
        return -1;
    store_int(u->code, p, s, us);
    return 0;
}

/* obj into *p; the name (the idx-th of names) is looked up only for an error. */
static inline int convert_int(PyObject *obj, const char *names, int idx, const int_unit *u, void *p)
{
    if (PyLong_CheckExact(obj)) {   /* the common case: no Python call, no second look */
        int overflow = 0;   /* an exact int sets no error here */
        long long x = PyLong_AsLongLongAndOverflow(obj, &overflow);
        int ok = !overflow &&
                 (u->is_signed ? u->bits >= 64 || (x >= -(1LL << (u->bits - 1)) && x < (1LL << (u->bits - 1)))
                               : x >= 0 && (u->bits >= 63 || x < (1LL << u->bits)));
        if (ok) {
            store_int(u->code, p, x, (unsigned long long)x);
            return 0;
        }
    }
    return convert_int_slow(obj, names, idx, u, p);
}

int pa_u32(PyObject *obj, const char *name, uint32_t *out)
{
    static const int_unit u32 = {'I', 0, 32};
    unsigned v;
    if (convert_int(obj, name, 0, &u32, &v))
        return -1;
    *out = v;
    return 0;
}

/* The keyword argument named `name` (len bytes), or NULL; *used counts the matches. */
static PyObject *keyword(PyObject *const *kwvalues, PyObject *kwnames, const char *name, size_t len, int *used)
{
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
        Py_ssize_t klen;
        const char *key = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(kwnames, k), &klen);
        if (!key) {
            PyErr_Clear();
            continue;
        }
        if ((size_t)klen == len && !memcmp(key, name, len)) {
            ++*used;
            return kwvalues[k];
        }
    }
    return NULL;
}

/* One pass over the units: each parameter is the positional argument of
 * its index or the keyword of its name; names are walked only when keywords
 * were given or for an error message. */
int pa_fast_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname,
                 const char *names, const char *fmt, ...)
{
    char buf[64];
    const char *ns = names;   /* the current unit's name, when walked */
    int i = 0, npos = 0, optional = 0, kwonly = 0, used = 0, ok = 1;
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f && ok; f++) {
        char c = *f;
        if (c == '|' || c == '$') {
            optional |= 1;
            kwonly |= c == '$';
            continue;
        }
        if (optional && i >= nargs && !kwnames)
            break;   /* the rest are left out: their variables keep the caller's defaults */
        PyObject *o = NULL;
        const char *name = NULL;
        size_t len = 0;
        npos += !kwonly;
        if (kwnames) {   /* the unit's name, to match keywords */
            while (*ns == ' ')
                ns++;
            name = ns;
            len = strcspn(ns, " ");
            ns += len;
        }
        if (i < nargs && !kwonly) {
            o = args[i];
            if (kwnames && keyword(args + nargs, kwnames, name, len, &used)) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                             nth_name(names, i, buf, sizeof buf));
                ok = 0;
                break;
            }
        } else if (kwnames) {
            o = keyword(args + nargs, kwnames, name, len, &used);
        }
        if (!o && !optional) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", fname,
                         nth_name(names, i, buf, sizeof buf), i + 1);
            ok = 0;
            break;
        }
        const int_unit *u = find_int_unit(c);
        if (u) {
            void *p = va_arg(ap, void *);
            ok = !o || convert_int(o, names, i, u, p) == 0;
        } else if (c == 'p') {
            int *p = va_arg(ap, int *);
            int t = o ? PyObject_IsTrue(o) : 0;
            if (t < 0)
                ok = 0;
            else if (o)
                *p = t;
        } else if (c == 'O' && f[1] == '!') {
            f++;
            PyTypeObject *type = va_arg(ap, PyTypeObject *);
            PyObject **p = va_arg(ap, PyObject **);
            if (o && !PyObject_TypeCheck(o, type)) {
                PyErr_Format(PyExc_TypeError, "%s must be %.100s, not %.100s",
                             nth_name(names, i, buf, sizeof buf), type->tp_name, Py_TYPE(o)->tp_name);
                ok = 0;
            } else if (o) {
                *p = o;
            }
        } else if (c == 'O') {
            PyObject **p = va_arg(ap, PyObject **);
            if (o)
                *p = o;
        } else {
            PyErr_Format(PyExc_SystemError, "pa_fast_args: format unit '%c' is not supported", c);
            ok = 0;
        }
        i++;
    }
    va_end(ap);
    if (ok && nargs > npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", fname, npos,
                     nargs);
        ok = 0;
    }
    if (ok && kwnames && used < PyTuple_GET_SIZE(kwnames)) {   /* a keyword that names no parameter */
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            Py_ssize_t klen;
            const char *kname = PyUnicode_AsUTF8AndSize(key, &klen);
            int found = 0;
            for (const char *q = names; kname && *q;) {
                while (*q == ' ')
                    q++;
                size_t l = strcspn(q, " ");
                found |= l && (size_t)klen == l && !memcmp(q, kname, l);
                q += l;
            }
            if (!kname)
                PyErr_Clear();
            if (!found) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, key);
                ok = 0;
                break;
            }
        }
    }
    return ok;
}
