/* machine_obj.c - _core.Machine: global memory, a cluster, pending operations.
 *
 * Global buffers are NumPy arrays (or any writable C-contiguous buffer): the
 * machine holds the buffer view until the buffer is removed or the machine
 * dies, so the memory cannot go away under a pending copy. Shared memory is
 * owned by the core and lent out as NumPy arrays whose base is the machine.
 * Long work (completing copies) runs without the GIL, holding the machine's
 * lock; any other call on the machine first waits for that lock (without the
 * GIL), so threads sharing a machine take turns instead of racing or failing.
 * The rule that makes this safe: a method runs no Python code (no argument
 * conversion, no callbacks) between enter() and its last use of the machine,
 * so it holds the GIL throughout and no core call can start meanwhile.
 */
#include "binding.h"

#include <structmember.h>

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL ptxasync_ARRAY_API
#include <numpy/arrayobject.h>

typedef struct {
    uint64_t id;
    Py_buffer view;
} HeldBuffer;

typedef struct {
    PyObject_HEAD
    pa_machine m;
    int ready;
    PyThread_type_lock lock;   /* held while the core runs without the GIL */
    int busy;                  /* lock taken (set and read holding the GIL) */
    HeldBuffer *held;
    size_t nheld, capheld;
} MachineObject;

/* Take the machine's lock, waiting without the GIL while another thread
 * runs the core on this machine. */
static void lock_machine(MachineObject *self)
{
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    self->busy = 1;
}

static void unlock_machine(MachineObject *self)
{
    self->busy = 0;
    PyThread_release_lock(self->lock);
}

/* Before using the machine under the GIL: wait until no thread runs the core.
 * busy changes only under the GIL, so when it is clear nobody holds the
 * lock for work, and nobody can start any while this thread keeps the GIL. */
static int enter(MachineObject *self)
{
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "machine is not initialised");
        return -1;
    }
    if (self->busy) {
        lock_machine(self);
        unlock_machine(self);
    }
    return 0;
}

static int machine_init(MachineObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"nctas", "smem_bytes", "target", NULL};
    unsigned nctas = 1, smem;
    PyObject *smem_obj = Py_None;
    const char *target = "sm_90a";
    if (!pa_args_kw(args, kw, kwlist, "|IOs", &nctas, &smem_obj, &target))
        return -1;
    int t = pa_parse_target(target);
    if (t < 0)
        return -1;
    /* None: 200 KiB, or all a CTA may have where the target allows less (sm_80: 163 KiB) */
    if (smem_obj == Py_None)
        smem = pa_target_smem_max((pa_target)t) < 200 * 1024 ? pa_target_smem_max((pa_target)t) : 200 * 1024;
    else if (pa_u32(smem_obj, "smem_bytes", &smem))
        return -1;
    if (self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "machine is already initialised");
        return -1;
    }
    if (!self->lock && !(self->lock = PyThread_allocate_lock())) {
        PyErr_SetString(PyExc_MemoryError, "out of host memory for the machine's lock");
        return -1;
    }
    pa_error err;
    if (pa_machine_init(&self->m, nctas, smem, &err)) {
        pa_machine_free(&self->m);
        pa_raise(&err);
        return -1;
    }
    if (pa_machine_set_target(&self->m, (pa_target)t, &err) || pa_watch_attach(&self->m, &err)) {
        pa_machine_free(&self->m);
        pa_raise(&err);
        return -1;
    }
    self->ready = 1;
    return 0;
}

static void machine_dealloc(MachineObject *self)
{
    for (size_t i = 0; i < self->nheld; i++)
        PyBuffer_Release(&self->held[i].view);
    PyMem_Free(self->held);
    if (self->ready)
        pa_machine_free(&self->m);
    if (self->lock)
        PyThread_free_lock(self->lock);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Does a buffer-protocol format hold Python object pointers ('O'), whose
 * bytes a copy must never overwrite? Field names (":name:") are skipped. */
static int format_has_objects(const char *fmt)
{
    for (const char *f = fmt ? fmt : ""; *f; f++) {
        if (*f == ':') {
            const char *close = strchr(f + 1, ':');
            if (!close)
                return 1;   /* malformed: treat as unusable */
            f = close;
        } else if (*f == 'O') {
            return 1;
        }
    }
    return 0;
}

/* Is any byte of [p, p + len) one of the machine's own shared memory? */
static int overlaps_smem(const MachineObject *self, const void *p, Py_ssize_t len)
{
    uintptr_t a = (uintptr_t)p, e = a + (uintptr_t)len;
    for (uint32_t r = 0; r < self->m.cluster.nctas; r++) {
        uintptr_t s = (uintptr_t)self->m.cluster.smem[r], se = s + self->m.cluster.smem_bytes;
        if (a < se && s < e)
            return 1;
    }
    return 0;
}

/* add_buffer(base, obj) -> id. Raises, registering nothing, unless obj is a
 * writable C-contiguous buffer of plain bytes outside the shared memory. */
static PyObject *m_add_buffer(MachineObject *self, PyObject *args)
{
    unsigned long long base;
    PyObject *obj;
    Py_buffer view;
    if (!pa_args(args, "address buffer", "KO", &base, &obj) ||
        PyObject_GetBuffer(obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (enter(self)) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const char *why = NULL;
    PyObject *cls = PyExc_TypeError;
    if (format_has_objects(view.format)) {
        why = "holds Python object pointers (format '%s'); global memory must be plain bytes "
              "(e.g. a NumPy array of a numeric dtype)";
    } else if (view.itemsize <= 0) {
        why = "has no fixed item size (format '%s')";
    } else if (view.len == 0) {
        why = "is empty (format '%s'); global memory needs at least 1 byte";
        cls = PyExc_ValueError;
    } else if (overlaps_smem(self, view.buf, view.len)) {
        why = "lies in the machine's own shared memory (format '%s'); shared memory cannot also be "
              "global memory";
        cls = PyExc_ValueError;
    }
    if (why) {
        PyObject *msg = PyUnicode_FromFormat(why, view.format ? view.format : "B");
        PyBuffer_Release(&view);
        if (msg) {
            PyErr_Format(cls, "the buffer %U", msg);
            Py_DECREF(msg);
        }
        return NULL;
    }
    if (self->nheld == self->capheld) {
        size_t cap = self->capheld ? self->capheld * 2 : 8;
        HeldBuffer *nh = PyMem_Realloc(self->held, cap * sizeof *nh);
        if (!nh) {
            PyBuffer_Release(&view);
            return PyErr_Format(PyExc_MemoryError, "out of host memory for the list of %zu registered buffers", cap);
        }
        self->held = nh;
        self->capheld = cap;
    }
    pa_error err;
    uint64_t id;
    if (pa_global_add(&self->m.global, base, (uint64_t)view.len, view.buf, &id, &err)) {
        PyBuffer_Release(&view);
        return pa_raise(&err);
    }
    PyObject *res = PyLong_FromUnsignedLongLong(id);
    if (!res) {   /* registered nothing after all */
        pa_global_remove(&self->m.global, id, &err);
        PyBuffer_Release(&view);
        return NULL;
    }
    self->held[self->nheld++] = (HeldBuffer){id, view};
    return res;
}

static PyObject *m_remove_buffer(MachineObject *self, PyObject *args)
{
    unsigned long long id;
    if (!pa_args(args, "id", "K", &id) || enter(self))
        return NULL;
    pa_error err;
    if (pa_machine_remove_buffer(&self->m, id, &err))
        return pa_raise(&err);
    for (size_t i = self->nheld; i-- > 0;) {     /* a multicast window holds one view per copy */
        if (self->held[i].id == id) {
            Py_buffer view = self->held[i].view;
            self->held[i] = self->held[--self->nheld];
            PyBuffer_Release(&view);   /* may run Python code: the machine is consistent */
        }
    }
    Py_RETURN_NONE;
}

/* add_multicast(address, size, copies, locals) -> id: a multicast window over the buffers
 * `copies` (writable, C-contiguous, at least size bytes each), locals[k] the copy's address
 * in this machine's global memory or None (another machine's). The views are held until
 * remove_buffer(id). */
static PyObject *m_add_multicast(MachineObject *self, PyObject *args)
{
    unsigned long long base, size;
    PyObject *copies, *locals;
    if (!pa_args(args, "address size copies locals", "KKOO", &base, &size, &copies, &locals) || enter(self))
        return NULL;
    Py_ssize_t n = PySequence_Size(copies);
    if (n < 0 || PySequence_Size(locals) != n)
        return PyErr_Format(PyExc_TypeError, "add_multicast: copies and locals are sequences of one length");
    if (n < 1 || n > PA_MC_MAX)
        return PyErr_Format(PyExc_ValueError, "a multicast object binds 1 to %d copies (%zd given)", PA_MC_MAX, n);
    if (self->nheld + (size_t)n > self->capheld) {
        size_t cap = (self->capheld ? self->capheld * 2 : 8) + (size_t)n;
        HeldBuffer *nh = PyMem_Realloc(self->held, cap * sizeof *nh);
        if (!nh)
            return PyErr_NoMemory();
        self->held = nh;
        self->capheld = cap;
    }
    Py_buffer views[PA_MC_MAX];
    uint8_t *ptr[PA_MC_MAX];
    uint64_t local[PA_MC_MAX];
    Py_ssize_t got = 0;
    for (; got < n; got++) {
        PyObject *c = PySequence_GetItem(copies, got), *l = c ? PySequence_GetItem(locals, got) : NULL;
        int bad = !l || PyObject_GetBuffer(c, &views[got], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0;
        if (!bad && (uint64_t)views[got].len < size) {
            PyErr_Format(PyExc_ValueError, "multicast copy %zd has %zd bytes, fewer than the window's %llu", got,
                         views[got].len, size);
            PyBuffer_Release(&views[got]);
            bad = 1;
        }
        if (!bad) {
            local[got] = l == Py_None ? PA_MC_FOREIGN : PyLong_AsUnsignedLongLong(l);
            if (PyErr_Occurred()) {
                PyBuffer_Release(&views[got]);
                bad = 1;
            }
        }
        Py_XDECREF(c);
        Py_XDECREF(l);
        if (bad)
            break;
        ptr[got] = views[got].buf;
    }
    pa_error err;
    uint64_t id = 0;
    int rc = got < n ? -1 : pa_global_add_multicast(&self->m.global, base, size, (uint32_t)n, ptr, local, &id, &err);
    if (rc) {
        for (Py_ssize_t i = 0; i < got; i++)
            PyBuffer_Release(&views[i]);
        return got < n ? NULL : pa_raise(&err);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        self->held[self->nheld++] = (HeldBuffer){id, views[i]};
    return PyLong_FromUnsignedLongLong(id);
}

static PyObject *m_pick_address(MachineObject *self, PyObject *args)
{
    unsigned long long size, align;
    if (!pa_args(args, "size align", "KK", &size, &align) || enter(self))
        return NULL;
    pa_error err;
    uint64_t addr;
    if (pa_global_pick_address(&self->m.global, size, align, &addr, &err))
        return pa_raise(&err);
    return PyLong_FromUnsignedLongLong(addr);
}

/* smem(rank) -> uint8 array viewing the CTA's shared memory (no copy). */
static PyObject *m_smem(MachineObject *self, PyObject *args)
{
    unsigned rank;
    if (!pa_args(args, "rank", "I", &rank) || enter(self))
        return NULL;
    if (rank >= self->m.cluster.nctas)
        return PyErr_Format(PyExc_IndexError, "CTA rank %u is outside the cluster of %u", rank,
                            self->m.cluster.nctas);
    npy_intp dims[1] = {(npy_intp)self->m.cluster.smem_bytes};
    PyObject *arr = PyArray_SimpleNewFromData(1, dims, NPY_UINT8, self->m.cluster.smem[rank]);
    if (!arr)
        return NULL;
    Py_INCREF(self);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)self) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

static PyObject *m_set_policy(MachineObject *self, PyObject *args)
{
    int policy;
    unsigned long long seed = 0;
    if (!pa_args(args, "policy seed", "i|K", &policy, &seed) || enter(self))
        return NULL;
    if (policy < PA_POLICY_IMMEDIATE || policy > PA_POLICY_ADVERSARIAL)
        return PyErr_Format(PyExc_ValueError, "unknown completion policy %d", policy);
    pa_machine_set_policy(&self->m, (pa_policy)policy, seed);
    Py_RETURN_NONE;
}

static PyObject *done_or_raise(int rc, const pa_error *err)
{
    if (rc)
        return pa_raise(err);
    Py_RETURN_NONE;
}

static PyObject *m_bulk_reduce(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, thread, src, size, mbar;
    int to_cluster, op, type, noftz;
    unsigned long long dst;
    if (!pa_fast_args(args, nargs, kwnames, "bulk_reduce", "cta thread to_cluster dst src size mbar op type noftz",
                      "IIpKIIIiip", &cta, &thread, &to_cluster, &dst, &src, &size, &mbar, &op, &type, &noftz) ||
        enter(self))
        return NULL;
    if (op < 0 || op >= PA_RED_COUNT || type < 0 || type >= PA_RT_COUNT)
        return PyErr_Format(PyExc_ValueError, "unknown reduction op %d or type %d", op, type);
    if (to_cluster && dst > UINT32_MAX)
        return PyErr_Format(PyExc_ValueError, "shared::cluster address %llu does not fit in 32 bits", dst);
    pa_error err;
    int rc;
    UNLOCKED((PyObject *)self, rc = pa_issue_bulk_reduce(&self->m, cta, thread,
                                                to_cluster ? PA_RDST_SHARED_CLUSTER : PA_RDST_GLOBAL, dst,
                                                src, size, mbar, (pa_redop)op, (pa_rtype)type, noftz, &err));
    return done_or_raise(rc, &err);
}

static PyObject *m_commit_group(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, thread;
    if (!pa_fast_args(args, nargs, kwnames, "commit_group", "cta thread", "II", &cta, &thread) || enter(self))
        return NULL;
    pa_error err;
    return done_or_raise(pa_bulk_commit_group(&self->m, cta, thread, &err), &err);
}

static PyObject *m_wait_group(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, thread, n;
    if (!pa_fast_args(args, nargs, kwnames, "wait_group", "cta thread n", "III", &cta, &thread,
                      &n) || enter(self))
        return NULL;
    pa_error err;
    int rc;
    UNLOCKED((PyObject *)self, rc = pa_bulk_wait_group(&self->m, cta, thread, n, &err));
    return done_or_raise(rc, &err);
}

static PyObject *m_step(MachineObject *self, PyObject *Py_UNUSED(ignored))
{
    if (enter(self))
        return NULL;
    pa_error err;
    int rc, done = 0;
    UNLOCKED((PyObject *)self, rc = pa_watch_step(&self->m, &done, &err));
    if (rc)
        return pa_raise(&err);
    return PyBool_FromLong(done);
}

static PyObject *m_run(MachineObject *self, PyObject *Py_UNUSED(ignored))
{
    if (enter(self))
        return NULL;
    pa_error err;
    int rc;
    UNLOCKED((PyObject *)self, rc = pa_watch_run(&self->m, &err));
    return done_or_raise(rc, &err);
}

static PyObject *m_pending(MachineObject *self, PyObject *Py_UNUSED(ignored))
{
    if (enter(self))
        return NULL;
    return PyLong_FromSize_t(self->m.nops);
}

/* --- mbarrier ------------------------------------------------------------------ */

static pa_mbar_slot *get_slot(MachineObject *self, unsigned cta, unsigned addr)
{
    pa_error err;
    if (cta >= self->m.cluster.nctas) {
        PyErr_Format(PyExc_IndexError, "CTA rank %u is outside the cluster of %u", cta, self->m.cluster.nctas);
        return NULL;
    }
    pa_mbar_slot *s = pa_machine_mbar_slot(&self->m, cta, addr, 0, &err);
    if (!s)
        pa_raise(&err);
    return s;
}

static pa_mbarrier *get_mbar(MachineObject *self, unsigned cta, unsigned addr)
{
    pa_mbar_slot *s = get_slot(self, cta, addr);
    return s ? &s->bar : NULL;
}

/* Would a try_wait on s complete copies of more than GIL_BYTES (the
 * pending operations that signal it)? */
static int heavy_wait(const pa_machine *m, const pa_mbar_slot *s)
{
    uint64_t bytes = 0;
    for (uint32_t id = s->ops.head; id != PA_NIL; id = m->pool[id].link_track.next)
        if ((bytes += m->pool[id].tx_bytes * (1 + (uint64_t)m->pool[id].merged)) >= GIL_BYTES)
            return 1;
    return 0;
}

/* test_wait / try_wait through the checker (the answer is the hardware's). */
static PyObject *mbar_wait(MachineObject *self, unsigned cta, unsigned addr, unsigned parity, unsigned thread,
                           int is_try)
{
    pa_mbar_slot *s = get_slot(self, cta, addr);   /* a slot never moves */
    if (!s)
        return NULL;
    pa_error err;
    int rc, result = 0;
    UNLOCKED_IF((PyObject *)self, is_try && heavy_wait(&self->m, s),
                   rc = pa_sync_wait_slot(&self->m, cta, thread, s, parity, is_try, &result, &err));
    if (rc)
        return pa_raise(&err);
    return PyBool_FromLong(result);
}

/* mbar_arrive's work (the arrival never moves bytes: no GIL release). */
static PyObject *mbar_arrive(MachineObject *self, unsigned cta, unsigned addr, unsigned count, unsigned tx,
                             unsigned flags, unsigned thread)
{
    if (cta >= self->m.cluster.nctas)   /* the rest is checked by the arrive itself */
        return PyErr_Format(PyExc_IndexError, "CTA rank %u is outside the cluster of %u", cta,
                            self->m.cluster.nctas);
    pa_error err;
    uint64_t state = 0;
    if (pa_sync_arrive(&self->m, cta, thread, addr, count, tx, flags, &state, &err))
        return pa_raise(&err);
    return PyLong_FromUnsignedLongLong(state);
}

PyObject *pa_machine_mbar_wait(PyObject *machine, uint32_t cta, uint32_t addr, uint32_t parity, uint32_t thread,
                               int is_try)
{
    MachineObject *self = (MachineObject *)machine;
    return enter(self) ? NULL : mbar_wait(self, cta, addr, parity, thread, is_try);
}

PyObject *pa_machine_mbar_arrive(PyObject *machine, uint32_t cta, uint32_t addr, uint32_t count, uint32_t tx,
                                 unsigned flags, uint32_t thread)
{
    MachineObject *self = (MachineObject *)machine;
    return enter(self) ? NULL : mbar_arrive(self, cta, addr, count, tx, flags, thread);
}

static PyObject *m_mbar_init(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, count, thread = 0;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_init", "cta addr count thread", "III|I", &cta, &addr,
                      &count, &thread) || enter(self))
        return NULL;
    if (cta >= self->m.cluster.nctas)
        return PyErr_Format(PyExc_IndexError, "CTA rank %u is outside the cluster", cta);
    pa_error err;
    return done_or_raise(pa_sync_init(&self->m, cta, thread, addr, count, &err), &err);
}

static PyObject *m_mbar_inval(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, thread = 0;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_inval", "cta addr thread", "II|I", &cta, &addr,
                      &thread) || enter(self))
        return NULL;
    if (!get_mbar(self, cta, addr))
        return NULL;
    pa_error err;
    return done_or_raise(pa_sync_inval(&self->m, cta, thread, addr, &err), &err);
}

/* mbar_arrive(cta, addr, count, tx, flags) -> state; flags: MBAR_DROP | MBAR_NO_COMPLETE */
static PyObject *m_mbar_arrive(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, count, tx, flags, thread = 0;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_arrive", "cta addr count tx flags thread", "IIIII|I", &cta,
                      &addr, &count, &tx, &flags, &thread) ||
        enter(self))
        return NULL;
    return mbar_arrive(self, cta, addr, count, tx, flags, thread);
}

static PyObject *m_mbar_tx(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, tx, thread = 0;
    int complete;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_tx", "cta addr tx complete thread", "IIIp|I", &cta, &addr,
                      &tx, &complete, &thread) || enter(self))
        return NULL;
    if (!get_mbar(self, cta, addr))
        return NULL;
    pa_error err;
    return done_or_raise(pa_sync_tx(&self->m, cta, thread, addr, tx, complete, &err), &err);
}


static PyObject *m_mbar_test_wait(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, parity, thread = 0;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_test_wait", "cta addr parity thread", "III|I", &cta, &addr,
                      &parity, &thread) || enter(self))
        return NULL;
    return mbar_wait(self, cta, addr, parity, thread, 0);
}

/* mbar_test_wait_state(cta, addr, state, thread=0): test_wait with a state operand */
static PyObject *m_mbar_test_wait_state(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, thread = 0;
    unsigned long long state;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_test_wait_state", "cta addr state thread", "IIK|I", &cta,
                      &addr, &state, &thread) || enter(self))
        return NULL;
    return mbar_wait(self, cta, addr, pa_mbar_state_parity(state), thread, 0);
}

static PyObject *m_mbar_try_wait(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, parity, thread = 0;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_try_wait", "cta addr parity thread", "III|I", &cta, &addr,
                      &parity, &thread) || enter(self))
        return NULL;
    return mbar_wait(self, cta, addr, parity, thread, 1);
}

/* mbar_try_wait_state(cta, addr, state, thread=0): try_wait with a state operand (R6) */
static PyObject *m_mbar_try_wait_state(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr, thread = 0;
    unsigned long long state;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_try_wait_state", "cta addr state thread", "IIK|I", &cta,
                      &addr, &state, &thread) || enter(self))
        return NULL;
    return mbar_wait(self, cta, addr, pa_mbar_state_parity(state), thread, 1);
}

static PyObject *m_mbar_state(MachineObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, addr;
    if (!pa_fast_args(args, nargs, kwnames, "mbar_state", "cta addr", "II", &cta, &addr) || enter(self))
        return NULL;
    pa_mbarrier *b = get_mbar(self, cta, addr);
    if (!b)
        return NULL;
    return Py_BuildValue("{s:O,s:K,s:i,s:i,s:i}", "valid", b->valid ? Py_True : Py_False, "phase",
                         (unsigned long long)b->phase, "expected", b->expected, "pending", b->pending,
                         "tx", b->tx);
}

static PyObject *m_nctas(MachineObject *self, void *Py_UNUSED(c))
{
    return PyLong_FromUnsignedLong(self->ready ? self->m.cluster.nctas : 0);
}

static PyObject *m_smem_bytes(MachineObject *self, void *Py_UNUSED(c))
{
    return PyLong_FromUnsignedLong(self->ready ? self->m.cluster.smem_bytes : 0);
}

static PyObject *m_target(MachineObject *self, void *Py_UNUSED(c))
{
    return PyUnicode_FromString(pa_target_name(self->ready ? (int)self->m.target : PA_TARGET_DEFAULT));
}

static PyGetSetDef machine_getset[] = {
    {"target", (getter)m_target, NULL, "compilation target (e.g. 'sm_90a')", NULL},
    {"nctas", (getter)m_nctas, NULL, "CTAs in the cluster", NULL},
    {"smem_bytes", (getter)m_smem_bytes, NULL, "shared memory per CTA", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef machine_methods[] = {
    {"_add_buffer", (PyCFunction)m_add_buffer, METH_VARARGS, "add_buffer(base, obj) -> id"},
    {"_remove_buffer", (PyCFunction)m_remove_buffer, METH_VARARGS, "remove_buffer(id)"},
    {"_add_multicast", (PyCFunction)m_add_multicast, METH_VARARGS, "add_multicast(address, size, copies, locals) -> id"},
    {"_pick_address", (PyCFunction)m_pick_address, METH_VARARGS, "pick_address(size, align) -> address"},
    {"_smem", (PyCFunction)m_smem, METH_VARARGS, "smem(rank) -> uint8 array (no copy)"},
    {"_set_policy", (PyCFunction)m_set_policy, METH_VARARGS, "set_policy(policy, seed=0)"},
    {"_bulk_reduce", (PyCFunction)(void (*)(void))m_bulk_reduce, METH_FASTCALL | METH_KEYWORDS,
     "bulk_reduce(cta, thread, to_cluster, dst, src, size, mbar, op, type, noftz)"},
    {"_commit_group", (PyCFunction)(void (*)(void))m_commit_group, METH_FASTCALL | METH_KEYWORDS,
     "cp.async.bulk.commit_group"},
    {"_wait_group", (PyCFunction)(void (*)(void))m_wait_group, METH_FASTCALL | METH_KEYWORDS,
     "cp.async.bulk.wait_group N"},
    {"_step", (PyCFunction)m_step, METH_NOARGS, "complete one pending operation"},
    {"_run", (PyCFunction)m_run, METH_NOARGS, "complete every pending operation"},
    {"_pending", (PyCFunction)m_pending, METH_NOARGS, "number of pending operations"},
    {"_mbar_init", (PyCFunction)(void (*)(void))m_mbar_init, METH_FASTCALL | METH_KEYWORDS, "mbarrier.init"},
    {"_mbar_inval", (PyCFunction)(void (*)(void))m_mbar_inval, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.inval"},
    {"_mbar_arrive", (PyCFunction)(void (*)(void))m_mbar_arrive, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.arrive{_drop}{.expect_tx|.noComplete}: (cta, addr, count, tx, flags) -> state"},
    {"_mbar_tx", (PyCFunction)(void (*)(void))m_mbar_tx, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.expect_tx / complete_tx"},
    {"_mbar_test_wait", (PyCFunction)(void (*)(void))m_mbar_test_wait, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.test_wait.parity"},
    {"_mbar_test_wait_state", (PyCFunction)(void (*)(void))m_mbar_test_wait_state, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.test_wait with a state"},
    {"_mbar_try_wait", (PyCFunction)(void (*)(void))m_mbar_try_wait, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.try_wait.parity"},
    {"_mbar_try_wait_state", (PyCFunction)(void (*)(void))m_mbar_try_wait_state, METH_FASTCALL | METH_KEYWORDS,
     "mbarrier.try_wait with a state"},
    {"_mbar_state", (PyCFunction)(void (*)(void))m_mbar_state, METH_FASTCALL | METH_KEYWORDS,
     "phase, counts and tx-count"},
    {NULL, NULL, 0, NULL}};

PyTypeObject MachineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptxasync._core.Machine",
    .tp_basicsize = sizeof(MachineObject),
    .tp_dealloc = (destructor)machine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,   /* ptxasync.Machine is one */
    .tp_doc = "Global memory, a cluster of CTAs and the pending asynchronous operations.",
    /* .tp_methods: every file's table, gathered (pa_module_add_machine) */
    .tp_getset = machine_getset,
    .tp_init = (initproc)machine_init,
    .tp_new = PyType_GenericNew,
};

/* One way into a Machine: every operation is a method, each file of the
 * binding contributing its table (the machine's own, cp.async / bulk /
 * st.async, the tensor copies, the checks, the memory model, batches and
 * replays), gathered
 * into the type before it is made. */
static int gather_methods(void)
{
    const PyMethodDef *tables[] = {machine_methods,          pa_tensor_machine_methods, pa_async_machine_methods,
                                   pa_watch_machine_methods, pa_hb_machine_methods,     pa_batch_machine_methods};
    size_t n = 0;
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
        for (const PyMethodDef *d = tables[t]; d->ml_name; d++)
            n++;
    PyMethodDef *all = PyMem_Calloc(n + 1, sizeof *all);   /* lives as long as the type */
    if (!all) {
        PyErr_SetString(PyExc_MemoryError, "out of host memory for the Machine type's methods");
        return -1;
    }
    n = 0;
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
        for (const PyMethodDef *d = tables[t]; d->ml_name; d++)
            all[n++] = *d;
    MachineType.tp_methods = all;
    return 0;
}

int pa_module_add_machine(PyObject *m)
{
    if ((!MachineType.tp_methods && gather_methods() < 0) || PyType_Ready(&MachineType) < 0)
        return -1;
    Py_INCREF(&MachineType);
    if (PyModule_AddObject(m, "Machine", (PyObject *)&MachineType) < 0) {
        Py_DECREF(&MachineType);
        return -1;
    }
    if (PyModule_AddIntConstant(m, "MBAR_DROP", PA_MBAR_DROP) ||
        PyModule_AddIntConstant(m, "MBAR_NO_COMPLETE", PA_MBAR_NO_COMPLETE))
        return -1;
    return 0;
}

/* For the other binding files (async_obj.c): the core machine of a Machine,
 * or NULL with TypeError / RuntimeError set; pa_machine_busy(obj, 1) / (obj, 0)
 * take and release the machine's lock around work done without the GIL
 * (take it while holding the GIL; see the top of this file). */
pa_machine *pa_machine_enter(PyObject *obj)
{
    static PyTypeObject *sub;
    if (!pa_type_check(obj, &MachineType, &sub)) {
        PyErr_Format(PyExc_TypeError, "expected a ptxasync._core.Machine, not %.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    MachineObject *self = (MachineObject *)obj;
    return enter(self) ? NULL : &self->m;
}

void pa_machine_busy(PyObject *obj, int busy)
{
    MachineObject *self = (MachineObject *)obj;
    if (busy)
        lock_machine(self);   /* waits (without the GIL) for another thread's core call */
    else
        unlock_machine(self);
}
