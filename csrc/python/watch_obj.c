/* watch_obj.c - the checker's face on _core.Machine: hazard mode and report,
 * the trace, explanations of waits; and the module's list of hazard rules. */
#include "binding.h"

/* The machine of self (the checker is attached at init), or NULL with an exception set. */
static pa_machine *ready(PyObject *self)
{
    pa_machine *m = pa_machine_enter(self);
    if (m && !m->watch) {
        PyErr_SetString(PyExc_RuntimeError, "machine is not initialised");
        return NULL;
    }
    return m;
}

PyObject *pa_raise_hazard(PyObject *cls, const pa_error *err)
{
    PyObject *exc = PyObject_CallFunction(cls, "s", err->msg);
    if (!exc)
        return NULL;
    /* the rule travels as data (pa_error.rule), not read back from the message */
    PyObject *rule = Py_None;
    if (err->rule)
        rule = PyUnicode_FromString(err->rule);
    else
        Py_INCREF(rule);
    if (!rule || PyObject_SetAttrString(exc, "rule", rule) < 0) {
        Py_XDECREF(rule);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(rule);
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

/* set_hazard_mode(report: bool) */
static PyObject *w_set_hazard_mode(PyObject *self, PyObject *args)
{
    int report;
    pa_machine *m;
    if (!pa_args(args, "report", "p", &report) || !(m = ready(self)))
        return NULL;
    m->watch->hz.report = report;
    Py_RETURN_NONE;
}

static PyObject *w_hazard_mode(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    return PyBool_FromLong(m->watch->hz.report);
}

/* hazards() -> [(rule, time, message)] in the order seen */
static PyObject *w_hazards(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    const pa_hazards *h = &m->watch->hz;
    PyObject *out = PyList_New((Py_ssize_t)h->n);
    for (size_t i = 0; out && i < h->n; i++) {
        PyObject *t = Py_BuildValue("(sKs)", pa_rule_id(h->recs[i].rule),
                                    (unsigned long long)h->recs[i].time, h->recs[i].msg);
        if (!t) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    return out;
}

static PyObject *w_clear_hazards(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    pa_hazards_clear(&m->watch->hz);
    Py_RETURN_NONE;
}

/* set_trace(enabled: bool) */
static PyObject *w_set_trace(PyObject *self, PyObject *args)
{
    int on;
    pa_machine *m;
    if (!pa_args(args, "enabled", "p", &on) || !(m = ready(self)))
        return NULL;
    m->watch->trace.enabled = on;
    Py_RETURN_NONE;
}

/* trace_events(start=0) -> [(time, kind, cta, thread, op, rank, addr, space, a, b)] */
static PyObject *w_trace_events(PyObject *self, PyObject *args)
{
    Py_ssize_t start = 0;
    pa_machine *m;
    if (!pa_args(args, "start", "|n", &start) || !(m = ready(self)))
        return NULL;
    const pa_trace *t = &m->watch->trace;
    if (start < 0 || (size_t)start > t->n)
        start = (Py_ssize_t)t->n;
    PyObject *out = PyList_New((Py_ssize_t)t->n - start);
    for (size_t i = (size_t)start; out && i < t->n; i++) {
        const pa_event *e = &t->ev[i];
        PyObject *op = e->op == PA_NO_OP ? Py_None : NULL;
        PyObject *cta = e->cta == PA_NO_THREAD ? Py_None : NULL;
        PyObject *thr = e->thread == PA_NO_THREAD ? Py_None : NULL;
        PyObject *tup = Py_BuildValue(
            "(KsNNNIIBKK)", (unsigned long long)e->time, pa_event_name(e->kind),
            cta ? (Py_INCREF(cta), cta) : PyLong_FromUnsignedLong(e->cta),
            thr ? (Py_INCREF(thr), thr) : PyLong_FromUnsignedLong(e->thread),
            op ? (Py_INCREF(op), op) : PyLong_FromUnsignedLongLong(e->op), e->rank, e->addr,
            e->space, (unsigned long long)e->a, (unsigned long long)e->b);
        if (!tup) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)(i - (size_t)start), tup);
    }
    return out;
}

static PyObject *w_clear_trace(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    pa_trace_clear(&m->watch->trace);
    Py_RETURN_NONE;
}

/* mbar_why(cta, addr, parity) -> dict with the counts and "text" */
static PyObject *w_mbar_why(PyObject *self, PyObject *args)
{
    unsigned cta, addr, parity;
    pa_machine *m;
    if (!pa_args(args, "cta addr parity", "III", &cta, &addr, &parity) || !(m = ready(self)))
        return NULL;
    pa_error err;
    pa_wait_why w;
    if (pa_sync_why(m, cta, addr, parity, &w, &err))
        return pa_raise(&err);
    char text[PA_ERRMSG_LEN];
    pa_sync_why_text(&w, text, sizeof text);
    return Py_BuildValue("{s:I,s:I,s:K,s:I,s:O,s:i,s:i,s:i,s:K,s:K,s:n,s:K,s:O,s:s}", "rank", w.rank,
                         "offset", w.offset, "phase", (unsigned long long)w.phase, "parity", w.parity,
                         "complete", w.complete ? Py_True : Py_False, "pending", w.pending, "expected",
                         w.expected, "tx", w.tx, "tx_expected", (unsigned long long)w.tx_expected,
                         "tx_credited", (unsigned long long)w.tx_credited, "nsignal", (Py_ssize_t)w.nsignal,
                         "signal_tx", (unsigned long long)w.signal_tx, "can_complete",
                         w.can_complete ? Py_True : Py_False, "text", text);
}

static PyObject *w_check_deadlock(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    pa_error err;
    if (pa_sync_check_deadlock(m, &err))
        return pa_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *w_set_memory_checks(PyObject *self, PyObject *args)
{
    int on;
    pa_machine *m;
    if (!pa_args(args, "on", "p", &on) || !(m = ready(self)))
        return NULL;
    m->watch->memcheck = on;
    Py_RETURN_NONE;
}

static PyObject *w_memory_checks(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    return PyBool_FromLong(pa_check_memory_on(m));
}

static PyObject *range_obj(const pa_range *r)
{
    if (!r->space)
        Py_RETURN_NONE;
    if (r->space == 1)
        return Py_BuildValue("{s:s,s:I,s:K,s:K}", "space", "shared", "cta", r->rank, "offset",
                             (unsigned long long)r->addr, "nbytes", (unsigned long long)r->len);
    return Py_BuildValue("{s:s,s:K,s:K}", "space", "global", "address", (unsigned long long)r->addr, "nbytes",
                         (unsigned long long)r->len);
}

static PyObject *tracker_obj(const pa_machine *m, const pa_op *op)
{
    switch (op->track) {
    case PA_TRACK_MBAR:
        return Py_BuildValue("{s:s,s:I,s:I,s:K}", "kind", "mbarrier", "cta", op->dst_rank, "offset",
                             op->mbar_offset, "tx_bytes", (unsigned long long)op->tx_bytes);
    case PA_TRACK_BULK_OPEN:
    case PA_TRACK_CP_OPEN:
        return Py_BuildValue("{s:s,s:O}", "kind",
                             op->track == PA_TRACK_BULK_OPEN ? "bulk async-group" : "cp.async-group", "group",
                             Py_None);
    case PA_TRACK_BULK_COMMITTED:
    case PA_TRACK_CP_COMMITTED:
        return Py_BuildValue("{s:s,s:K}", "kind",
                             op->track == PA_TRACK_BULK_COMMITTED ? "bulk async-group" : "cp.async-group",
                             "group", (unsigned long long)op->group);
    default:
        (void)m;
        Py_RETURN_NONE;
    }
}

/* pending_ops() -> [dict] in issue order */
static PyObject *w_pending_ops(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    PyObject *out = PyList_New(0);
    for (uint32_t id = m->all.head; out && id != PA_NIL; id = m->pool[id].link_all.next) {
        const pa_op *op = &m->pool[id];
        pa_range src, dst;
        int reduce;
        pa_qv_ranges(op, &src, &dst, &reduce);
        PyObject *d = Py_BuildValue("{s:K,s:s,s:i,s:I,s:I,s:N,s:N,s:N,s:O,s:O}", "op",
                                    (unsigned long long)op->seq, "kind", op->engine->name, "kind_id",
                                    (int)op->kind, "cta", op->cta, "thread", op->thread, "source",
                                    range_obj(&src), "destination", range_obj(&dst), "tracked_by",
                                    tracker_obj(m, op), "source_read", op->read_done ? Py_True : Py_False,
                                    "reduction", reduce ? Py_True : Py_False);
        if (!d || PyList_Append(out, d) < 0)
            Py_CLEAR(out);
        Py_XDECREF(d);
    }
    return out;
}

/* check_read(cta, thread, rank, offset, nbytes): a model-API read of shared memory */
static PyObject *w_check_read(PyObject *self, PyObject *args)
{
    unsigned cta, thread, rank, off, len;
    pa_machine *m;
    if (!pa_args(args, "cta thread rank offset nbytes", "IIIII", &cta, &thread, &rank, &off, &len) || !(m = ready(self)))
        return NULL;
    pa_error err;
    if (pa_check_read(m, cta, thread, rank, off, len, &err))
        return pa_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *w_finish(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    pa_machine *m = ready(self);
    if (!m)
        return NULL;
    pa_error err;
    if (pa_watch_finish(m, &err))
        return pa_raise(&err);
    Py_RETURN_NONE;
}

/* exit(cta, thread): thread -1 = the whole CTA */
static PyObject *w_exit(PyObject *self, PyObject *args)
{
    unsigned cta;
    long long thread;
    pa_machine *m;
    if (!pa_args(args, "cta thread", "IL", &cta, &thread) || !(m = ready(self)))
        return NULL;
    if (thread < -1 || thread >= (long long)PA_NO_THREAD)
        return PyErr_Format(PyExc_ValueError, "thread %lld is not a thread id", thread);
    pa_error err;
    if (pa_watch_exit(m, cta, thread < 0 ? PA_NO_THREAD : (uint32_t)thread, &err))
        return pa_raise(&err);
    Py_RETURN_NONE;
}

/* Methods of a Machine (machine_obj.c gathers every file's table). */
PyMethodDef pa_watch_machine_methods[] = {
    {"_exit", (PyCFunction)w_exit, METH_VARARGS, "exit(cta, thread): thread -1 = the CTA"},
    {"_finish", (PyCFunction)w_finish, METH_NOARGS, "the kernel exits: never-waited operations, then run"},
    {"_set_memory_checks", (PyCFunction)w_set_memory_checks, METH_VARARGS, "set_memory_checks(on)"},
    {"_memory_checks", (PyCFunction)w_memory_checks, METH_NOARGS, "are the memory checks on"},
    {"_pending_ops", (PyCFunction)w_pending_ops, METH_NOARGS, "pending_ops() -> [dict], issue order"},
    {"_check_read", (PyCFunction)w_check_read, METH_VARARGS, "check_read(cta, thread, rank, offset, nbytes)"},
    {"_set_hazard_mode", (PyCFunction)w_set_hazard_mode, METH_VARARGS, "set_hazard_mode(report)"},
    {"_hazard_mode", (PyCFunction)w_hazard_mode, METH_NOARGS, "True: hazards are collected"},
    {"_hazards", (PyCFunction)w_hazards, METH_NOARGS, "hazards() -> [(rule, time, message)]"},
    {"_clear_hazards", (PyCFunction)w_clear_hazards, METH_NOARGS, "forget the collected hazards"},
    {"_set_trace", (PyCFunction)w_set_trace, METH_VARARGS, "set_trace(enabled)"},
    {"_trace_events", (PyCFunction)w_trace_events, METH_VARARGS,
     "trace_events(start=0) -> [(time, kind, cta, thread, op, rank, addr, space, a, b)]"},
    {"_clear_trace", (PyCFunction)w_clear_trace, METH_NOARGS, "forget the recorded events"},
    {"_mbar_why", (PyCFunction)w_mbar_why, METH_VARARGS, "mbar_why(cta, addr, parity) -> dict"},
    {"_check_deadlock", (PyCFunction)w_check_deadlock, METH_NOARGS,
     "raise Deadlock if a blocked waiter's phase cannot complete"},
    {NULL, NULL, 0, NULL}};

int pa_module_add_watch(PyObject *m)
{
    PyObject *rules = PyTuple_New(PA_HZ_COUNT);
    for (int r = 0; rules && r < PA_HZ_COUNT; r++) {
        PyObject *s = PyUnicode_FromString(pa_rule_id(r));
        if (!s) {
            Py_CLEAR(rules);
            break;
        }
        PyTuple_SET_ITEM(rules, r, s);
    }
    if (!rules || PyModule_AddObject(m, "HAZARD_RULES", rules) < 0) {
        Py_XDECREF(rules);
        return -1;
    }
    return PyModule_AddIntConstant(m, "POISON_WORD", (long)PA_POISON_WORD);
}
