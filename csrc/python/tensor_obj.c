/* tensor_obj.c - the bulk tensor copies as methods of _core.Machine:
 * cp_async_bulk_tensor_load (every form, PTX operand names), tensor_store
 * (stores and reductions) and prefetch_tensor. They convert the operands and
 * hand them to the core, which owns every rule (copy/): which modes a form
 * takes, how many coordinates and im2colInfo values a mode needs, the map.
 * METH_FASTCALL: a loop of small loads spends most of its time in the call.
 */
#include "binding.h"

#include <ctype.h>
#include <stdlib.h>

static PyObject *done(int rc, const pa_error *err)
{
    if (rc)
        return pa_raise(err);
    Py_RETURN_NONE;
}

/* --- operands ------------------------------------------------------------------------------- */

/* .load_mode: a LoadMode (an int) or its name, PTX (".tile::gather4") or the
 * enum's ("TILE_GATHER4"), any case; NULL is .tile. */
static int parse_mode(PyObject *obj, int *mode)
{
    static const char *const enum_names[PA_MODE_COUNT] = {"TILE", "IM2COL", "IM2COL_NO_OFFS", "TILE_GATHER4",
                                                          "TILE_SCATTER4", "IM2COL_W", "IM2COL_W128"};
    *mode = PA_MODE_TILE;
    if (!obj)
        return 0;
    if (PyUnicode_Check(obj)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(obj, &n);
        if (!s)
            return -1;
        char key[32];
        while (n && isspace((unsigned char)*s))
            s++, n--;
        while (n && isspace((unsigned char)s[n - 1]))
            n--;
        while (n && *s == '.')
            s++, n--;
        if (n > 14 && !strncasecmp(s, "CU_TENSOR_MAP_", 14))
            s += 14, n -= 14;
        if (n > 0 && (size_t)n < sizeof key) {
            for (Py_ssize_t i = 0; i < n; i++)
                key[i] = (char)toupper((unsigned char)s[i]);
            key[n] = 0;
            for (int m = 0; m < PA_MODE_COUNT; m++) {
                const char *ptx = pa_mode_name((pa_load_mode)m) + 1;   /* ".tile::gather4" */
                if (!strcmp(key, enum_names[m]) || !strcasecmp(key, ptx)) {
                    *mode = m;
                    return 0;
                }
            }
        }
        PyErr_Format(PyExc_ValueError, "%R is not a valid LoadMode (valid: TILE, IM2COL, IM2COL_NO_OFFS, "
                     "TILE_GATHER4, TILE_SCATTER4, IM2COL_W, IM2COL_W128)", obj);
        return -1;
    }
    if (PyBool_Check(obj) || !PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "load_mode must be a LoadMode or its name, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long v = PyLong_AsLongAndOverflow(obj, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 0 || v >= PA_MODE_COUNT) {
        PyErr_Format(PyExc_ValueError, "%S is not a valid LoadMode value (valid: TILE=0, IM2COL=1, "
                     "IM2COL_NO_OFFS=2, TILE_GATHER4=3, TILE_SCATTER4=4, IM2COL_W=5, IM2COL_W128=6)", obj);
        return -1;
    }
    *mode = (int)v;
    return 0;
}

/* tensorCoords: up to PA_MAX_RANK .s32; how many the mode needs is the core's rule. */
static int parse_coords(PyObject *seq, int32_t coords[PA_MAX_RANK], int *n)
{
    int64_t v[PA_MAX_RANK];
    memset(coords, 0, sizeof(int32_t) * PA_MAX_RANK);
    /* a loop's call: a tuple of ints in .s32 range, read in place (anything
     * else, or any value out of range, takes the general path and its errors) */
    if (PyTuple_CheckExact(seq) && PyTuple_GET_SIZE(seq) <= PA_MAX_RANK && !PyErr_Occurred()) {
        const Py_ssize_t k = PyTuple_GET_SIZE(seq);
        Py_ssize_t i = 0;
        for (; i < k; i++) {
            PyObject *o = PyTuple_GET_ITEM(seq, i);
            int overflow = 0;   /* an exact int sets no error */
            long long x = PyLong_CheckExact(o) ? PyLong_AsLongLongAndOverflow(o, &overflow) : 0;
            if (!PyLong_CheckExact(o) || overflow || x < INT32_MIN || x > INT32_MAX)
                break;
            coords[i] = (int32_t)x;
        }
        if (i == k) {
            *n = (int)k;
            return 0;
        }
        memset(coords, 0, sizeof(int32_t) * PA_MAX_RANK);
    }
    if ((*n = pa_parse_i64_seq(seq, v, PA_MAX_RANK, "tensorCoords")) < 0)
        return -1;
    return pa_coords_s32(v, *n, coords);
}

/* .u16 values of im2colInfo into info[*n...]. */
static int parse_u16s(PyObject *seq, const char *what, uint16_t info[PA_MAX_RANK - 2], int *n)
{
    int64_t v[PA_MAX_RANK - 2];
    if ((*n = pa_parse_i64_seq(seq, v, PA_MAX_RANK - 2, what)) < 0)
        return -1;
    for (int i = 0; i < *n; i++) {
        if (v[i] < 0 || v[i] > UINT16_MAX) {
            PyErr_Format(PyExc_OverflowError, "%s[%d] = %lld does not fit in .u16", what, i, (long long)v[i]);
            return -1;
        }
        info[i] = (uint16_t)v[i];
    }
    return 0;
}

/* One .u16 of .im2col::w's im2colInfo, named. */
static int parse_w(PyObject *obj, const char *name, uint16_t *out)
{
    if (!obj) {
        *out = 0;
        return 0;
    }
    if (PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *i = PyNumber_Index(obj);
    if (!i)
        return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    if (overflow || v < 0 || v > UINT16_MAX)
        PyErr_Format(PyExc_OverflowError, "%s = %S does not fit in .u16 (im2colInfo of .im2col::w)", name, i);
    Py_DECREF(i);
    if (PyErr_Occurred())
        return -1;
    *out = (uint16_t)v;
    return 0;
}

/* The im2colInfo operand as the Python API spells it: .im2col::w / ::w::128
 * take {w_halo, w_offset}; any other mode im2col_offsets (None: no values). */
static int parse_info(int mode, PyObject *offsets, PyObject *w_halo, PyObject *w_offset,
                      uint16_t info[PA_MAX_RANK - 2], int *n)
{
    memset(info, 0, sizeof(uint16_t) * (PA_MAX_RANK - 2));
    *n = 0;
    if (mode == PA_MODE_IM2COL_W || mode == PA_MODE_IM2COL_W128) {
        *n = 2;
        return parse_w(w_halo, "w_halo", &info[0]) || parse_w(w_offset, "w_offset", &info[1]) ? -1 : 0;
    }
    if (!offsets || offsets == Py_None)
        return 0;
    if (!PySequence_Check(offsets) || PyUnicode_Check(offsets)) {
        PyErr_Format(PyExc_TypeError, "im2col_offsets must be a sequence of rank - 2 integers (the W, H, D "
                     "offsets, e.g. (0, 0) for a 4-D map), not %.100s", Py_TYPE(offsets)->tp_name);
        return -1;
    }
    return parse_u16s(offsets, "im2colOffsets", info, n);
}

/* The map operand: a TensorMap, or (as_address) an integer, the global
 * address of one, decoded later from global memory (read_map). */
static int parse_map(PyObject *obj, const pa_tensormap **map, uint64_t *address)
{
    static PyTypeObject *sub;
    *map = NULL;
    if (pa_type_check(obj, &TensorMapType, &sub))
        return (*map = pa_tm_decoded((TensorMapObject *)obj)) ? 0 : -1;
    if (PyBool_Check(obj) || PyFloat_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "tmap must be %.100s, not %.100s", TensorMapType.tp_name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (pa_check_int(obj, "tensorMap", 0, 64))
        return -1;
    PyObject *i = PyNumber_Index(obj);
    if (!i)
        return -1;
    *address = PyLong_AsUnsignedLongLong(i);
    Py_DECREF(i);
    return PyErr_Occurred() ? -1 : 0;
}

/* A map held in global memory: read by (cta, thread) through the tensormap
 * proxy (the race checker follows it until forget_map) and decoded into *out. */
static int read_map(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t address, pa_tensormap *out,
                    pa_error *err)
{
    int rc = pa_hb_tensormap_read(m, cta, thread, address, err);
    if (rc)
        return rc;
    uint8_t bytes[PA_TENSORMAP_BYTES];
    memcpy(bytes, pa_global_resolve(&m->global, address, PA_TENSORMAP_BYTES, NULL), sizeof bytes);
    return pa_tensormap_unpack(bytes, out, err);
}

static void forget_map(pa_machine *m)
{
    pa_hb_tensormap_read(m, 0, 0, UINT64_MAX, NULL);
}

/* --- the methods ------------------------------------------------------------------------------ */

/* cp_async_bulk_tensor_load(tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
 *     cta_mask=None, load_mode="tile", im2col_offsets=None, w_halo=0, w_offset=0, cta_group=None) */
static PyObject *t_load(PyObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta = 0, thread = 0, dst;
    PyObject *tmap, *coords_obj, *mbar_obj, *space = NULL, *mask_obj = Py_None, *mode_obj = NULL,
                                                *offsets = Py_None, *w_halo = NULL, *w_offset = NULL,
                                                *group_obj = Py_None;
    if (nargs == 4 && !kwnames) {   /* the common call, (tmap, coords, dst, mbar): the same checks, quicker */
        tmap = args[0], coords_obj = args[1], mbar_obj = args[3];
        if (pa_u32_fast(args[2], "dst", &dst))
            return NULL;
    } else if (!pa_fast_args(args, nargs, kwnames, "cp_async_bulk_tensor_load",
                             "tmap coords dst mbar cta thread dst_space cta_mask load_mode im2col_offsets w_halo "
                             "w_offset cta_group",
                             "OOIO|IIOOOOOOO", &tmap, &coords_obj, &dst, &mbar_obj, &cta, &thread, &space,
                             &mask_obj, &mode_obj, &offsets, &w_halo, &w_offset, &group_obj)) {
        return NULL;
    }
    const pa_tensormap *map;
    uint64_t address = 0;
    uint32_t mbar, mask = 0;
    int mode, ncoords, ninfo, cluster = 0, cta_group = 0;
    int32_t coords[PA_MAX_RANK];
    uint16_t info[PA_MAX_RANK - 2];
    if (parse_map(tmap, &map, &address) || pa_mbar_operand(mbar_obj, &mbar) || parse_mode(mode_obj, &mode) ||
        parse_coords(coords_obj, coords, &ncoords) ||
        parse_info(mode, offsets, w_halo, w_offset, info, &ninfo))
        return NULL;
    if (space) {
        int is_cta = PyUnicode_Check(space) && PyUnicode_CompareWithASCIIString(space, "shared::cta") == 0;
        cluster = PyUnicode_Check(space) && PyUnicode_CompareWithASCIIString(space, "shared::cluster") == 0;
        if (!is_cta && !cluster)
            return PyErr_Format(PyExc_ValueError,
                                "dst_space must be 'shared::cta' or 'shared::cluster', not %R", space);
    }
    const int multicast = mask_obj != Py_None;
    if (multicast) {
        if (pa_u32(mask_obj, "cta_mask", &mask))
            return NULL;
        if (mask > 0xFFFF)
            return PyErr_Format(PyExc_ValueError, "ctaMask 0x%x does not fit in 16 bits", mask);
    }
    if (group_obj != Py_None) {
        if (pa_check_int(group_obj, "cta_group", 1, 32))
            return NULL;
        cta_group = (int)PyLong_AsLong(group_obj);
    }
    /* the operands converted: no Python code runs from here to the last use of m */
    pa_machine *m = pa_machine_enter(self);
    if (!m)
        return NULL;
    pa_error err;
    pa_tensormap held;
    int rc = 0;
    if (!map) {
        rc = read_map(m, cta, thread, address, &held, &err);
        map = &held;
    }
    const int heavy = !rc && pa_tensormap_box_bytes(map) >= GIL_BYTES;
    if (heavy && map != &held) {   /* another thread may edit the TensorMap while the GIL is released */
        held = *map;
        map = &held;
    }
    if (!rc)
        UNLOCKED_IF(self, heavy,
                    rc = pa_issue_tensor_load_group(m, cta, thread, map, (pa_load_mode)mode, coords, ncoords,
                                                    info, ninfo, dst, cluster || multicast, mbar, multicast,
                                                    (uint16_t)mask, cta_group, &err));
    if (address)
        forget_map(m);
    return done(rc, &err);
}

/* tensor_store(cta, thread, tmap, load_mode, coords, src, redop): cp.async.bulk.tensor
 * shared::cta -> global (redop -1), or cp.reduce.async.bulk.tensor with redop. */
static PyObject *t_store(PyObject *self, PA_FASTCALL_PARAMS)
{
    unsigned cta, thread, src;
    int redop = -1, mode, ncoords;
    PyObject *tmap, *mode_obj, *coords_obj;
    if (!pa_fast_args(args, nargs, kwnames, "tensor_store", "cta thread tmap load_mode coords src redop",
                      "IIOOOI|i", &cta, &thread, &tmap, &mode_obj, &coords_obj, &src, &redop))
        return NULL;
    const pa_tensormap *map;
    uint64_t address = 0;
    int32_t coords[PA_MAX_RANK];
    if (parse_map(tmap, &map, &address) || parse_mode(mode_obj, &mode) ||
        parse_coords(coords_obj, coords, &ncoords))
        return NULL;
    if (redop >= PA_RED_COUNT)
        return PyErr_Format(PyExc_ValueError, "unknown reduction operation %d", redop);
    pa_machine *m = pa_machine_enter(self);
    if (!m)
        return NULL;
    pa_error err;
    pa_tensormap held;
    int rc = 0;
    if (map)
        held = *map;   /* another thread may edit the TensorMap while the GIL is released */
    else
        rc = read_map(m, cta, thread, address, &held, &err);
    if (!rc)
        UNLOCKED(self, rc = pa_issue_tensor_store(m, cta, thread, &held, (pa_load_mode)mode, coords, ncoords, src,
                                                  redop >= 0, redop >= 0 ? (pa_redop)redop : PA_RED_ADD, &err));
    if (address)
        forget_map(m);
    return done(rc, &err);
}

/* The runs a prefetch names, kept in C until the machine is left. */
typedef struct {
    uint64_t (*v)[3];
    size_t n, cap;
} range_list;

static int append_range(void *ctx, uint64_t row, uint64_t addr, uint64_t n, pa_error *err)
{
    range_list *r = ctx;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        void *p = realloc(r->v, cap * sizeof *r->v);
        if (!p)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory recording a prefetch");
        r->v = p;
        r->cap = cap;
    }
    r->v[r->n][0] = row;
    r->v[r->n][1] = addr;
    r->v[r->n][2] = n;
    r->n++;
    return PA_OK;
}

/* prefetch_tensor(tmap, load_mode, coords, im2col_offsets=None, w_halo=0, w_offset=0)
 *     -> [(row, address, bytes), ...] */
static PyObject *t_prefetch(PyObject *self, PA_FASTCALL_PARAMS)
{
    PyObject *tm, *mode_obj, *coords_obj, *offsets = Py_None, *w_halo = NULL, *w_offset = NULL;
    if (!pa_fast_args(args, nargs, kwnames, "prefetch_tensor", "tmap load_mode coords im2col_offsets w_halo w_offset",
                      "O!OO|OOO", &TensorMapType, &tm, &mode_obj, &coords_obj, &offsets, &w_halo, &w_offset))
        return NULL;
    const pa_tensormap *map = pa_tm_decoded((TensorMapObject *)tm);
    int mode, ncoords, ninfo;
    int32_t coords[PA_MAX_RANK];
    uint16_t info[PA_MAX_RANK - 2];
    if (!map || parse_mode(mode_obj, &mode) || parse_coords(coords_obj, coords, &ncoords) ||
        parse_info(mode, offsets, w_halo, w_offset, info, &ninfo))
        return NULL;
    pa_machine *m = pa_machine_enter(self);
    if (!m)
        return NULL;
    range_list rl = {NULL, 0, 0};
    pa_error err;
    int rc = pa_issue_prefetch_tensor(m, map, (pa_load_mode)mode, coords, ncoords, info, ninfo, append_range, &rl,
                                      &err);
    PyObject *out = rc ? pa_raise(&err) : PyList_New((Py_ssize_t)rl.n);
    for (size_t i = 0; out && i < rl.n; i++) {
        PyObject *t = Py_BuildValue("(KKK)", (unsigned long long)rl.v[i][0], (unsigned long long)rl.v[i][1],
                                    (unsigned long long)rl.v[i][2]);
        if (!t) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    free(rl.v);
    return out;
}

#define FAST(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL | METH_KEYWORDS

PyMethodDef pa_tensor_machine_methods[] = {
    {"cp_async_bulk_tensor_load", FAST(t_load),
     "cp_async_bulk_tensor_load($self, /, tmap, coords, dst, mbar, cta=0, thread=0, dst_space='shared::cta', "
     "cta_mask=None, load_mode='tile', im2col_offsets=None, w_halo=0, w_offset=0, cta_group=None)\n--\n\n"
     "cp.async.bulk.tensor.Nd.{shared::cta|shared::cluster}.global.{tile|im2col}\n"
     ".mbarrier::complete_tx::bytes{.multicast::cluster} [dst], [tmap, coords], [mbar]{, offsets}.\n\n"
     "``coords`` are driver order (c0 = innermost; im2col: C, W, H, D, N).\n"
     "``tmap`` is a TensorMap, or the global address of one (read in the tensormap proxy).\n"
     "``dst`` / ``mbar`` are shared addresses (or Mbarrier for ``mbar``);\n"
     "``cta_mask`` (not None) multicasts to those CTAs: each gets the box at\n"
     "dst's CTA-relative offset and its mbarrier at mbar's offset is credited\n"
     "(golden C3); a mask of 0 reaches no CTA (C9); a bit at or above the\n"
     "cluster size raises IllegalInstruction at issue (C10).\n"
     "``load_mode=\"im2col\"`` takes ``im2col_offsets`` (W, H, D: rank - 2 of\n"
     "them; docs/im2col-mode.md).\n\n"
     "sm_100 modes (docs/load-modes.md; the machine's target must have them):\n"
     "``\"tile::gather4\"`` takes ``coords = (col, row0, row1, row2, row3)``;\n"
     "``\"im2col::w\"`` / ``\"im2col::w::128\"`` take an im2col-wide map and the\n"
     "im2colInfo operands ``w_halo`` and ``w_offset``. ``cta_group`` 1 or 2 is the\n"
     "``.cta_group::N`` qualifier (sm_100a/f family): with 2, each destination CTA's\n"
     "signal goes to the mbarrier in the CTA of its pair with the parity of ``mbar``'s CTA."},
    {"_tensor_store", FAST(t_store),
     "tensor_store(cta, thread, tmap, load_mode, coords, src, redop=-1): cp{.reduce}.async.bulk.tensor "
     "shared::cta -> global"},
    {"_prefetch_tensor", FAST(t_prefetch),
     "prefetch_tensor(tmap, load_mode, coords, im2col_offsets=None, w_halo=0, w_offset=0) -> "
     "[(row, addr, bytes)]"},
    {NULL, NULL, 0, NULL}};
