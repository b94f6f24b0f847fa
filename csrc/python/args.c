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

static const int_unit *find_int_unit(char c)
{
    for (size_t i = 0; i < sizeof int_units / sizeof *int_units; i++)
        if (int_units[i].code == c)
            return &int_units[i];
    return NULL;
}

int pa_check_int(PyObject *obj, const char *name, int is_signed, int bits)
{
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyLong_CheckExact(obj)) {   /* the common case, without Python arithmetic */
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (!overflow && !(x == -1 && PyErr_Occurred())) {
            int ok = is_signed ? bits >= 64 || (x >= -(1LL << (bits - 1)) && x < (1LL << (bits - 1)))
                               : x >= 0 && (bits >= 63 || x < (1LL << bits));
            if (ok)
                return 0;
        }
        PyErr_Clear();   /* out of range or too large: the exact check below says so */
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
 * kwlist name). ap walks the same pointers PyArg would, for "O!"'s type. */
static int precheck(PyObject *args, PyObject *kw, char **kwlist, const char *names, const char *fmt,
                    va_list ap)
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

int pa_args(PyObject *args, const char *names, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int ok = precheck(args, NULL, NULL, names, fmt, ap2) == 0 && PyArg_VaParse(args, fmt, ap);
    va_end(ap2);
    va_end(ap);
    return ok;
}

int pa_args_kw(PyObject *args, PyObject *kw, char **kwlist, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int ok = precheck(args, kw, kwlist, NULL, fmt, ap2) == 0 &&
             PyArg_VaParseTupleAndKeywords(args, kw, fmt, kwlist, ap);
    va_end(ap2);
    va_end(ap);
    return ok;
}
