/* binding.h - shared declarations of the CPython binding (thin: convert, delegate, raise). */
#ifndef PA_BINDING_H
#define PA_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core.h"
#include "ptx/text/ptx.h"

/* Exception classes, created at module init. */
extern PyObject *PaError, *PaEncodeError, *PaIllegalInstruction, *PaIllegalAddress,
    *PaMisalignedAddress, *PaHazard, *PaDeadlock, *PaDeviceAssert;

/* Raise the exception that matches err->code; returns NULL for `return pa_raise(&err);`. */
PyObject *pa_raise(const pa_error *err);

/* PyArg_ParseTuple / PyArg_ParseTupleAndKeywords with every integer unit
 * range-checked first (args.c): out of range is an OverflowError naming the
 * parameter and its range ("dst must be in [0, 2^32); got 4294968320").
 * names: the positional parameters' names, space-separated. */
int pa_args(PyObject *args, const char *names, const char *fmt, ...);
int pa_args_kw(PyObject *args, PyObject *kw, char **kwlist, const char *fmt, ...);
/* pa_args for METH_FASTCALL | METH_KEYWORDS methods (no tuple, no dict):
 * units b B h H i I l k L K n p O O!, '|' then optional, '$' then
 * keyword-only; names as pa_args'; fname names the method in arity errors. */
int pa_fast_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname,
                 const char *names, const char *fmt, ...);
/* The parameters of a METH_FASTCALL | METH_KEYWORDS method. */
#define PA_FASTCALL_PARAMS PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames
/* A .u32 operand into *out, or -1 with pa_check_int's error naming it. */
int pa_u32(PyObject *obj, const char *name, uint32_t *out);
/* 0 if obj is an integer in [0, 2^bits) (signed: [-2^(bits-1), 2^(bits-1)));
 * else -1 with TypeError / OverflowError naming it. */
int pa_check_int(PyObject *obj, const char *name, int is_signed, int bits);

/* PyObject_TypeCheck(o, t), remembering in *memo the first subclass of t met
 * (ptxasync's Machine, Mbarrier and TensorMap subclass the _core types): the
 * calls of a loop then skip the walk of the type's MRO. The memo holds a
 * reference, so the type it names cannot be freed and its address reused. */
static inline int pa_type_check(PyObject *o, PyTypeObject *t, PyTypeObject **memo)
{
    PyTypeObject *ty = Py_TYPE(o);
    if (ty == t || ty == *memo)
        return 1;
    if (!PyType_IsSubtype(ty, t))
        return 0;
    if (!*memo) {
        Py_INCREF(ty);
        *memo = ty;
    }
    return 1;
}

/* 1 with *out if obj is an exact int in .u32 range; 0 for anything else,
 * setting no error (an exact int's conversion raises nothing). */
static inline int pa_exact_u32(PyObject *obj, uint32_t *out)
{
    if (!obj || !PyLong_CheckExact(obj))
        return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow || v < 0 || v > (long long)UINT32_MAX)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

/* pa_u32 inline for an exact int in range (a loop's operands), else pa_u32. */
static inline int pa_u32_fast(PyObject *obj, const char *name, uint32_t *out)
{
    return pa_exact_u32(obj, out) ? 0 : pa_u32(obj, name, out);
}

/* Read a sequence of at most max integers into out; returns count or -1. */
int pa_parse_i64_seq(PyObject *seq, int64_t *out, int max, const char *what);
int pa_fill_u64(PyObject *seq, uint64_t *out, uint32_t n, const char *what);
int pa_coords_s32(const int64_t *v, int n, int32_t out[PA_MAX_RANK]);

/* The tensor-map object. */
typedef struct {
    PyObject_HEAD
    uint8_t bytes[PA_TENSORMAP_BYTES];
    pa_tensormap map;   /* decoded from bytes; kept in step with them */
    pa_error undecoded; /* code != 0: an edit left bytes no field can hold (map is stale) */
    Py_ssize_t exports; /* live buffer views */
} TensorMapObject;

/* The decoded map, or NULL with the decoding error raised. */
const pa_tensormap *pa_tm_decoded(TensorMapObject *tm);

extern PyTypeObject TensorMapType;
extern PyTypeObject MachineType;

int pa_module_add_tensormap(PyObject *m);
int pa_module_add_machine(PyObject *m);
int pa_module_add_batch(PyObject *m);
/* The checker's methods of Machine and module functions (watch_obj.c). */
int pa_module_add_watch(PyObject *m);
/* Raise a Hazard (or Deadlock) whose `rule` attribute is err->rule. */
PyObject *pa_raise_hazard(PyObject *cls, const pa_error *err);
/* The Machine methods of each file (gathered by machine_obj.c). */
extern PyMethodDef pa_tensor_machine_methods[], pa_async_machine_methods[], pa_watch_machine_methods[],
    pa_hb_machine_methods[], pa_batch_machine_methods[];
/* ptx_check / ptx_print (ptx_obj.c). */
int pa_module_add_ptx(PyObject *m);
/* Diagnostics as [(severity, line, column, message)] (ptx_obj.c; ptx.check and ptx.Kernel). */
PyObject *pa_ptx_diags_list(const ptx_diags *ds);
/* _core.PtxKernel and ptx_kernel (kernel_obj.c): the PTX interpreter. */
int pa_module_add_kernel(PyObject *m);

/* The core machine of a Machine object (NULL with an exception set), and the
 * busy flag around work done without the GIL (machine_obj.c). */
pa_machine *pa_machine_enter(PyObject *obj);
void pa_machine_busy(PyObject *obj, int busy);

/* Releasing the GIL and taking it back costs about as much as moving a few
 * KiB (a lock round trip and clock reads): work that moves less than
 * GIL_BYTES runs holding it, so a loop of small copies does not pay it. */
#define GIL_BYTES (64 * 1024)

/* Run stmt (a core call on mobj) without the GIL, holding the machine's lock
 * (taken while holding the GIL; see machine_obj.c). */
#define UNLOCKED(mobj, stmt)          \
    do {                              \
        pa_machine_busy(mobj, 1);     \
        Py_BEGIN_ALLOW_THREADS        \
        stmt;                         \
        Py_END_ALLOW_THREADS          \
        pa_machine_busy(mobj, 0);     \
    } while (0)

/* The same where heavy; else stmt holding the GIL. */
#define UNLOCKED_IF(mobj, heavy, stmt) \
    do {                               \
        if (heavy)                     \
            UNLOCKED(mobj, stmt);      \
        else {                         \
            stmt;                      \
        }                              \
    } while (0)
/* An mbarrier's operations on machine (a _core.Machine) as a Python call
 * returns them (the state / True or False), or NULL with the error raised;
 * a try_wait releases the GIL only when it has many bytes to move. */
PyObject *pa_machine_mbar_arrive(PyObject *machine, uint32_t cta, uint32_t addr, uint32_t count, uint32_t tx,
                                 unsigned flags, uint32_t thread);
PyObject *pa_machine_mbar_wait(PyObject *machine, uint32_t cta, uint32_t addr, uint32_t parity, uint32_t thread,
                               int is_try);

/* The mbarrier object (mbarrier_obj.c). */
extern PyTypeObject MbarrierType;
int pa_module_add_mbarrier(PyObject *m);
/* An mbarrier operand: an Mbarrier's address, or a .u32 integer ("mbar"). */
int pa_mbar_operand(PyObject *obj, uint32_t *addr);
/* 1 with *addr if obj is an Mbarrier whose address is an int in .u32 range; else 0 (no error). */
int pa_mbar_known_addr(PyObject *obj, uint32_t *addr);

int pa_module_add_consumers(PyObject *m);
int pa_module_add_modes(PyObject *m);

/* A pa_target from its name, or -1 with ValueError set. */
int pa_parse_target(const char *name);

#endif
