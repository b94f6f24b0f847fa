"""The fifth-generation tensor core (PTX ISA 9.7.16: tcgen05.*) and cluster launch control
(9.7.13.17: clusterlaunchcontrol.*). tcgen05 is of the sm_100 family's architecture-specific
targets (PTX 8.6: sm_100a, sm_101a; 8.8: sm_100f, sm_101f, sm_103a/f, sm_110...): tensor memory
addresses are `[taddr]` (a 32-bit register), the matrix and instruction descriptors 64- and
32-bit registers. Neither tensor memory nor cluster launch control is modelled: text/notyet.c
names them.
"""
_ARCH = "sm_100a sm_101a sm_110a sm_103a sm_100f+ sm_110f+"
_CG = ".cta_group = { .cta_group::1, .cta_group::2 }"
_V = "8.6"
_SHAPE1 = ".shape = { .16x64b, .16x128b, .16x256b, .32x32b }"
_NUM = ".num = { .x1, .x2, .x4, .x8, .x16, .x32, .x64, .x128 }"
_COLL = ".collector_usage = { .collector::a::fill, .collector::a::use, .collector::a::lastuse, " \
    ".collector::a::discard }"


def _r(syntax, qreq=(), v=_V, arch=_ARCH):
    return (syntax, v, 100, "", list(qreq), arch)


_KIND = ".kind = { .kind::f16, .kind::tf32, .kind::f8f6f4, .kind::i8 }"
_BKIND = ".kind = { .kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4 }"
_SV = ".scale_vectorsize = { .scale_vec::1X, .scale_vec::2X, .scale_vec::4X, .block16, .block32 }"
_SVREQ = [(".block16", 88, 100), (".block32", 88, 100)]

ROWS = [
    _r(f"tcgen05.alloc.cta_group.sync.aligned{{.ss}}.b32 [dst], nCols;  {_CG}  .ss = {{ .shared::cta }}"),
    _r(f"tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols;  {_CG}"),
    _r(f"tcgen05.relinquish_alloc_permit.cta_group.sync.aligned;  {_CG}"),
    _r(f"tcgen05.ld.sync{{.aligned}}.shape.num{{.pack}}.b32 r, [taddr];  {_SHAPE1}  {_NUM}  .pack = {{ .pack::16b }}"),
    _r(f"tcgen05.ld.sync{{.aligned}}.shape.num{{.pack}}.b32 r, [taddr], immHalfSplitoff;  .shape = {{ .16x32bx2 }}  "
       f"{_NUM}  .pack = {{ .pack::16b }}"),
    _r(f"tcgen05.st.sync{{.aligned}}.shape.num{{.unpack}}.b32 [taddr], r;  {_SHAPE1}  {_NUM}  .unpack = {{ .unpack::16b }}"),
    _r(f"tcgen05.st.sync{{.aligned}}.shape.num{{.unpack}}.b32 [taddr], immHalfSplitoff, r;  .shape = {{ .16x32bx2 }}  "
       f"{_NUM}  .unpack = {{ .unpack::16b }}"),
    _r("tcgen05.wait::ld.sync.aligned;"),
    _r("tcgen05.wait::st.sync.aligned;"),
    _r(f"tcgen05.cp.cta_group.shape{{.multicast}}{{.dst_fmt.src_fmt}} [taddr], s-desc;  {_CG}  "
       ".shape = { .128x256b, .4x256b, .128x128b, .64x128b, .32x128b }  "
       ".multicast = { .warpx2::02_13, .warpx2::01_23, .warpx4 }  .dst_fmt = { .b8x16 }  "
       ".src_fmt = { .b6x16_p32, .b4x16_p64 }"),
    # ptxas 13.0: not on sm_100f, sm_103f, sm_110f ("Instruction 'tcgen05.shift' not supported"); sm_101f it takes
    _r(f"tcgen05.shift.cta_group.down [taddr];  {_CG}", arch="sm_100a sm_101a sm_103a sm_110a sm_101f"),
    _r(f"tcgen05.commit.cta_group.completion_mechanism{{.ss}}{{.multicast}}.b64 [mbar] {{, ctaMask}};  {_CG}  "
       ".completion_mechanism = { .mbarrier::arrive::one }  .ss = { .shared::cluster }  "
       ".multicast = { .multicast::cluster }"),
    _r("tcgen05.fence::before_thread_sync;"),
    _r("tcgen05.fence::after_thread_sync;"),
    # mma: A from shared memory (a descriptor) or tensor memory, with or without the disabled lanes
    *[_r(f"tcgen05.mma.cta_group.kind{{.collector_usage}} [d-tmem], {a}, b-desc, idesc, {dis}enable-input-d "
         f"{{, scale-input-d}};  {_CG}  {_KIND}  {_COLL}") for a in ("a-desc", "[a-tmem]")
      for dis in ("", "disable-output-lane, ")],
    *[_r(f"tcgen05.mma.sp.cta_group.kind{{.collector_usage}} [d-tmem], {a}, b-desc, [sp-meta-tmem], idesc, "
         f"{dis}enable-input-d {{, scale-input-d}};  {_CG}  {_KIND}  {_COLL}") for a in ("a-desc", "[a-tmem]")
      for dis in ("", "disable-output-lane, ")],
    *[_r(f"tcgen05.mma.cta_group.kind.block_scale{{.scale_vectorsize}}{{.collector_usage}} [d-tmem], {a}, b-desc, "
         f"idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d;  {_CG}  {_BKIND}  {_SV}  {_COLL}", _SVREQ)
      for a in ("a-desc", "[a-tmem]")],
    *[_r(f"tcgen05.mma.sp.cta_group.kind.block_scale{{.scale_vectorsize}}{{.collector_usage}} [d-tmem], {a}, "
         f"b-desc, [sp-meta-tmem], idesc, [scale-A-tmem], [scale-B-tmem], enable-input-d;  {_CG}  {_BKIND}  "
         f"{_SV}  {_COLL}", _SVREQ) for a in ("a-desc", "[a-tmem]")],
    *[_r(f"tcgen05.mma.ws.cta_group::1.kind{{.collector_usage}} [d-tmem], {a}, b-desc, idesc, enable-input-d "
         f"{{, zero-column-mask-desc}};  {_KIND}  .collector_usage = {{ .collector::b0::fill, .collector::b0::use, "
         ".collector::b0::lastuse, .collector::b0::discard, .collector::b1::fill, .collector::b1::use, "
         ".collector::b1::lastuse, .collector::b1::discard, .collector::b2::fill, .collector::b2::use, "
         ".collector::b2::lastuse, .collector::b2::discard, .collector::b3::fill, .collector::b3::use, "
         ".collector::b3::lastuse, .collector::b3::discard }") for a in ("a-desc", "[a-tmem]")],
    *[_r(f"tcgen05.mma.ws.sp.cta_group::1.kind{{.collector_usage}} [d-tmem], {a}, b-desc, [sp-meta-tmem], idesc, "
         f"enable-input-d {{, zero-column-mask-desc}};  {_KIND}  .collector_usage = {{ .collector::b0::fill, "
         ".collector::b0::use, .collector::b0::lastuse, .collector::b0::discard, .collector::b1::fill, "
         ".collector::b1::use, .collector::b1::lastuse, .collector::b1::discard, .collector::b2::fill, "
         ".collector::b2::use, .collector::b2::lastuse, .collector::b2::discard, .collector::b3::fill, "
         ".collector::b3::use, .collector::b3::lastuse, .collector::b3::discard }") for a in ("a-desc", "[a-tmem]")],
    # cluster launch control (sm_100 and later, any suffix)
    ("clusterlaunchcontrol.try_cancel.async{.ss}.mbarrier::complete_tx::bytes{.multicast::cluster::all}.b128 "
     "[addr], [mbar];  .ss = { .shared::cta }", "8.6", 100, ""),
    ("clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 pred, try_cancel_response;", "8.6", 100, ""),
    ("clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 d, try_cancel_response;", "8.6", 100, ""),
    ("clusterlaunchcontrol.query_cancel.dimension.b32.b128 d, try_cancel_response;  "
     ".dimension = { .get_first_ctaid::x, .get_first_ctaid::y, .get_first_ctaid::z }", "8.6", 100, ""),
]
