/* typeinfo.c - facts of the PTX types and names for messages. */
#include "sem/sem.h"

static const struct {
    const char *name;
    uint8_t bits, reg, is_float, is_signed;
} T[SEM_T_COUNT] = {
    [SEM_T_NONE] = {"", 0, 0, 0, 0},        [SEM_T_PRED] = {".pred", 1, 1, 0, 0},
    [SEM_T_B8] = {".b8", 8, 16, 0, 0},      [SEM_T_B16] = {".b16", 16, 16, 0, 0},
    [SEM_T_B32] = {".b32", 32, 32, 0, 0},   [SEM_T_B64] = {".b64", 64, 64, 0, 0},
    [SEM_T_B128] = {".b128", 128, 128, 0, 0},
    [SEM_T_U8] = {".u8", 8, 16, 0, 0},      [SEM_T_U16] = {".u16", 16, 16, 0, 0},
    [SEM_T_U32] = {".u32", 32, 32, 0, 0},   [SEM_T_U64] = {".u64", 64, 64, 0, 0},
    [SEM_T_S8] = {".s8", 8, 16, 0, 1},      [SEM_T_S16] = {".s16", 16, 16, 0, 1},
    [SEM_T_S32] = {".s32", 32, 32, 0, 1},   [SEM_T_S64] = {".s64", 64, 64, 0, 1},
    [SEM_T_F16] = {".f16", 16, 16, 1, 1},   [SEM_T_F16X2] = {".f16x2", 32, 32, 1, 1},
    [SEM_T_BF16] = {".bf16", 16, 16, 1, 1}, [SEM_T_BF16X2] = {".bf16x2", 32, 32, 1, 1},
    [SEM_T_TF32] = {".tf32", 32, 32, 1, 1}, [SEM_T_F32] = {".f32", 32, 32, 1, 1},
    [SEM_T_F64] = {".f64", 64, 64, 1, 1},
    [SEM_T_E4M3] = {".e4m3", 8, 16, 1, 1},  [SEM_T_E5M2] = {".e5m2", 8, 16, 1, 1},
    [SEM_T_E4M3X2] = {".e4m3x2", 16, 16, 1, 1}, [SEM_T_E5M2X2] = {".e5m2x2", 16, 16, 1, 1},
    [SEM_T_E4M3X4] = {".e4m3x4", 32, 32, 1, 1}, [SEM_T_E5M2X4] = {".e5m2x4", 32, 32, 1, 1},
    [SEM_T_E2M1X2] = {".e2m1x2", 8, 16, 1, 1},  [SEM_T_E2M1X4] = {".e2m1x4", 16, 16, 1, 1},
    [SEM_T_E2M3X2] = {".e2m3x2", 16, 16, 1, 1}, [SEM_T_E2M3X4] = {".e2m3x4", 32, 32, 1, 1},
    [SEM_T_E3M2X2] = {".e3m2x2", 16, 16, 1, 1}, [SEM_T_E3M2X4] = {".e3m2x4", 32, 32, 1, 1},
    [SEM_T_UE8M0X2] = {".ue8m0x2", 16, 16, 1, 0}, [SEM_T_S2F6X2] = {".s2f6x2", 16, 16, 1, 1},
};

static int ok(sem_type t)
{
    return (unsigned)t < SEM_T_COUNT;
}

int sem_type_bits(sem_type t) { return ok(t) ? T[t].bits : 0; }
int sem_type_reg_bits(sem_type t) { return ok(t) ? T[t].reg : 0; }
int sem_type_is_float(sem_type t) { return ok(t) && T[t].is_float; }
int sem_type_is_signed(sem_type t) { return ok(t) && T[t].is_signed; }
const char *sem_type_name(sem_type t) { return ok(t) ? T[t].name : "?"; }

sem_type sem_type_from_name(const char *s)
{
    for (int t = 1; t < SEM_T_COUNT; t++) {
        const char *n = T[t].name;
        const char *p = s;
        if (*p != '.')
            n++;                               /* a name given without its dot */
        while (*n && *n == *p) {
            n++;
            p++;
        }
        if (!*n && !*p)
            return (sem_type)t;
    }
    return SEM_T_NONE;
}

const char *sem_op_name(sem_op op)
{
    static const char *const N[SEM_OP_COUNT] = {
        [SEM_OP_NONE] = "?",
#define SEM_OP_NAME(name, text) [SEM_OP_##name] = text,
        SEM_OPS(SEM_OP_NAME)
#undef SEM_OP_NAME
    };
    return (unsigned)op < SEM_OP_COUNT ? N[op] : "?";
}

sem_op sem_op_from_name(const char *s)
{
    for (int op = 1; op < SEM_OP_COUNT; op++) {
        const char *n = sem_op_name((sem_op)op), *p = s;
        while (*n && *n == *p) {
            n++;
            p++;
        }
        if (!*n && !*p)
            return (sem_op)op;
    }
    return SEM_OP_NONE;
}
