/* coll_warp.h - the warp collectives that compute over the lanes' values
 * (redux.sync, match.sync) and activemask: what coll.c's meeting runs. */
#ifndef PA_PTX_COLL_WARP_H
#define PA_PTX_COLL_WARP_H

#include "ptx/exec/launch.h"

/* pi_ext.flags of PX_REDUX */
enum { PI_REDUX_SIGNED = 1, PI_REDUX_F32 = 2, PI_REDUX_ABS = 4, PI_REDUX_NAN = 8 };

/* PX_REDUX / PX_MATCH for the lanes that met (lane[i] NULL: not a member). */
int pi_warp_values(const pi_ext *x, pi_thread *const lane[32], pa_error *err);

/* PX_MOVMATRIX for the whole warp (movmatrix is .aligned): d of every lane from a. */
int pi_movmatrix(pi_thread *const lane[32], const pi_ext *x, pa_error *err);

/* PX_ACTIVEMASK for thread t: its destination gets the mask, its pc moves on. */
int pi_activemask(pi_launch_state *L, pi_thread *t, const pi_ext *x);

#endif
