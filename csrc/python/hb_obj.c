/* hb_obj.c - the memory model's face on _core.Machine: race checks on / off,
 * accesses of threads through the model, fences, barriers, the races found. */
#include "binding.h"
#include "check/hb.h"

static pa_machine *ready(PyObject *self)
{
    pa_machine *m = pa_machine_enter(self);
    if (m && !m->watch) {
        PyErr_SetString(PyExc_RuntimeError, "machine is not initialised");
        return NULL;
    }
    return m;
}

static PyObject *done(int rc, const pa_error *err)
{
    if (rc)
        return pa_raise(err);
    Py_RETURN_NONE;
}

/* set_races(on) */
static PyObject *h_set_races(PyObject *self, PyObject *args)
{
    int on;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "p", &on) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_set(m, on, &err), &err);
}

static PyObject *h_races_enabled(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    return m ? PyBool_FromLong(pa_hb_enabled(m)) : NULL;
}

/* set_same_value(mode): PA_SAME_VALUE_RACE / _RECORD / _ACCEPT */
static PyObject *h_set_same_value(PyObject *self, PyObject *args)
{
    int mode;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "i", &mode) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_set_same_value(m, mode, &err), &err);
}

static PyObject *h_same_value(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    return m ? PyLong_FromLong(pa_hb_same_value(m)) : NULL;
}

static const char *const INSTR[] = {"ld.shared", "st.shared", "ld.global", "st.global", "tensormap.replace"};

/* access(cta, thread, space, rank, addr, nbytes, instr): space 1 shared (rank,
 * offset), 2 global; instr an index of INSTR (odd: a write, and 4). */
static PyObject *h_access(PyObject *self, PyObject *args)
{
    unsigned cta, thread, space, rank, instr;
    unsigned long long addr, n;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "IIIIKKI", &cta, &thread, &space, &rank, &addr, &n, &instr) || !(m = ready(self)))
        return NULL;
    if (instr > 4 || (space != 1 && space != 2))
        return PyErr_Format(PyExc_ValueError, "no access kind %u in space %u", instr, space);
    const int write = instr == 1 || instr == 3 || instr == 4;
    pa_error err;
    if (space == 1) {
        if (addr > UINT32_MAX || n > UINT32_MAX)
            return PyErr_Format(PyExc_ValueError, "shared bytes [0x%llx, +%llu) are outside shared memory", addr, n);
        return done(pa_hb_smem(m, cta, thread, rank, (uint32_t)addr, (uint32_t)n, write, INSTR[instr], &err), &err);
    }
    return done(pa_hb_global(m, cta, thread, addr, n, write, INSTR[instr], &err), &err);
}

/* tensormap_read(cta, thread, addr): addr -1 forgets the pending one */
static PyObject *h_tensormap_read(PyObject *self, PyObject *args)
{
    unsigned cta, thread;
    long long addr;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "IIL", &cta, &thread, &addr) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_tensormap_read(m, cta, thread, addr < 0 ? UINT64_MAX : (uint64_t)addr, &err), &err);
}

/* fence_proxy_async(cta, thread, space) */
static PyObject *h_fence_proxy_async(PyObject *self, PyObject *args)
{
    unsigned cta, thread;
    int space;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "IIi", &cta, &thread, &space) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_fence_proxy_async(m, cta, thread, space, &err), &err);
}

/* fence_proxy_tensormap(cta, thread, acquire, addr, size) */
static PyObject *h_fence_proxy_tensormap(PyObject *self, PyObject *args)
{
    unsigned cta, thread, size;
    int acquire;
    unsigned long long addr;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "IIpKI", &cta, &thread, &acquire, &addr, &size) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_fence_proxy_tensormap(m, cta, thread, acquire, addr, size, &err), &err);
}

/* fence_mbarrier_init(cta, thread) */
static PyObject *h_fence_mbarrier_init(PyObject *self, PyObject *args)
{
    unsigned cta, thread;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "II", &cta, &thread) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_fence_mbarrier_init(m, cta, thread, &err), &err);
}

/* fence(cta, thread, sem, scope): sem PA_HB_FENCE_* */
static PyObject *h_fence(PyObject *self, PyObject *args)
{
    unsigned cta, thread;
    int sem, scope;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "IIii", &cta, &thread, &sem, &scope) || !(m = ready(self)))
        return NULL;
    if (sem < PA_HB_FENCE_ACQ_REL || sem > PA_HB_FENCE_RELEASE)
        return PyErr_Format(PyExc_ValueError, "fence semantics %d is not 0 (.acq_rel) to 3 (.release)", sem);
    pa_error err;
    return done(pa_hb_fence(m, cta, thread, sem, scope, &err), &err);
}

/* bar_sync(cta, barrier, threads): threads a tuple of ids, or () for every thread */
static PyObject *h_bar_sync(PyObject *self, PyObject *args)
{
    unsigned cta, barrier;
    PyObject *seq;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "IIO!", &cta, &barrier, &PyTuple_Type, &seq) || !(m = ready(self)))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    uint32_t *ids = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids)
        return PyErr_Format(PyExc_MemoryError, "out of host memory for %zd thread ids", n);
    for (Py_ssize_t i = 0; i < n; i++)
        if (pa_u32(PyTuple_GET_ITEM(seq, i), "thread", &ids[i]) < 0) {
            PyMem_Free(ids);
            return NULL;
        }
    pa_error err;
    int rc = pa_hb_bar_sync(m, cta, barrier, ids, (size_t)n, &err);
    PyMem_Free(ids);
    return done(rc, &err);
}

/* barrier_cluster(relaxed) */
static PyObject *h_barrier_cluster(PyObject *self, PyObject *args)
{
    int relaxed;
    pa_machine *m;
    if (!PyArg_ParseTuple(args, "p", &relaxed) || !(m = ready(self)))
        return NULL;
    pa_error err;
    return done(pa_hb_barrier_cluster(m, relaxed, &err), &err);
}

static PyObject *access_dict(const pa_hb_access *a)
{
    static const char *const PROXY[] = {"generic", "async", "tensormap"};
    PyObject *op = a->op == PA_NO_OP ? Py_None : PyLong_FromUnsignedLongLong(a->op);
    if (op == Py_None)
        Py_INCREF(op);
    if (!op)
        return NULL;
    return Py_BuildValue("{s:K,s:I,s:I,s:N,s:s,s:I,s:K,s:K,s:O,s:s,s:s}", "time", (unsigned long long)a->time,
                         "cta", a->cta, "thread", a->thread, "op", op, "space", a->space == 1 ? "shared" : "global",
                         "rank", a->rank, "lo", (unsigned long long)a->lo, "hi", (unsigned long long)a->hi,
                         "write", a->write ? Py_True : Py_False, "proxy", PROXY[a->proxy % 3],
                         "instr", a->instr ? a->instr : "");
}

/* races() -> [{rule, time, first, second}] */
static PyObject *h_races(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    const pa_hb_race *r;
    size_t n = pa_hb_races(m, &r);
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *d = Py_BuildValue("{s:s,s:K,s:N,s:N}", "rule", pa_rule_id(r[i].rule), "time",
                                    (unsigned long long)r[i].time, "first", access_dict(&r[i].first), "second",
                                    access_dict(&r[i].second));
        if (!d || PyList_Append(out, d) < 0)
            Py_CLEAR(out);
        Py_XDECREF(d);
    }
    return out;
}

/* Methods of a Machine (machine_obj.c gathers every file's table). */
PyMethodDef pa_hb_machine_methods[] = {
    {"_set_races", (PyCFunction)h_set_races, METH_VARARGS, "set_races(on)"},
    {"_races_enabled", (PyCFunction)h_races_enabled, METH_NOARGS, "are the race checks on"},
    {"_set_same_value", (PyCFunction)h_set_same_value, METH_VARARGS, "set_same_value(mode)"},
    {"_same_value", (PyCFunction)h_same_value, METH_NOARGS, "the same-value store mode"},
    {"_hb_access", (PyCFunction)h_access, METH_VARARGS, "hb_access(cta, thread, space, rank, addr, nbytes, instr)"},
    {"_tensormap_read", (PyCFunction)h_tensormap_read, METH_VARARGS, "tensormap_read(cta, thread, addr)"},
    {"_fence_proxy_async", (PyCFunction)h_fence_proxy_async, METH_VARARGS, "fence_proxy_async(cta, thread, space)"},
    {"_fence_proxy_tensormap", (PyCFunction)h_fence_proxy_tensormap, METH_VARARGS,
     "fence_proxy_tensormap(cta, thread, acquire, addr, size)"},
    {"_fence_mbarrier_init", (PyCFunction)h_fence_mbarrier_init, METH_VARARGS, "fence_mbarrier_init(cta, thread)"},
    {"_fence", (PyCFunction)h_fence, METH_VARARGS, "fence(cta, thread, sc, scope)"},
    {"_bar_sync", (PyCFunction)h_bar_sync, METH_VARARGS, "bar_sync(cta, barrier, threads)"},
    {"_barrier_cluster", (PyCFunction)h_barrier_cluster, METH_VARARGS, "barrier_cluster(relaxed)"},
    {"_races", (PyCFunction)h_races, METH_NOARGS, "races() -> [dict]"},
    {NULL, NULL, 0, NULL}};

