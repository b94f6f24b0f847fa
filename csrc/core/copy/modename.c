/* modename.c - each tensor copy mode's PTX name, apart from the mode table
 * (modes.c) so that the modes' own files can name themselves without calling
 * into the table that calls them. */
#include "copy.h"

const char *pa_mode_name(pa_load_mode mode)
{
    static const char *const NAME[PA_MODE_COUNT] = {
        [PA_MODE_TILE] = ".tile", [PA_MODE_IM2COL] = ".im2col", [PA_MODE_IM2COL_NO_OFFS] = ".im2col_no_offs",
        [PA_MODE_TILE_GATHER4] = ".tile::gather4", [PA_MODE_TILE_SCATTER4] = ".tile::scatter4",
        [PA_MODE_IM2COL_W] = ".im2col::w", [PA_MODE_IM2COL_W128] = ".im2col::w::128",
    };
    return (unsigned)mode < PA_MODE_COUNT ? NAME[mode] : "an unknown mode";
}
