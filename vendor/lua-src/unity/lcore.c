/*
** The Lua VM's hot core as one translation unit (docs/performance.md, "Cross-file inlining").
**
** Why: compiled one file at a time, clang cannot inline a small function of one file into a
** caller in another: luaV_execute called luaH_getshortstr, luaH_getint, luaH_psetint, luaH_new
** out of line, and table.sort's loop (ltablib.c) called lua_geti, lua_seti, lua_compare and
** lua_call (lapi.c) out of line, where wasmoon's emcc build (whole-module wasm-opt -O3) inlines
** them. Lua's sources are written to be compiled as one unit (Lua's own onelua.c does it for all
** of them), so including these files here gives clang that reach without changing a line of them.
**
** How: tools/vendor.mjs moves every file named in an #include "core/..." line below into
** the copy's core/ folder, where lua-src's build (which compiles every .c file of the source
** folder) does not see it, so each is compiled exactly once, here. wasm-support/wasm-cc compiles
** this file at -O2 (RUNVIL_SPEED_FILES). This list is the one place that says which files are in
** the unit.
**
** Bytes: the files above the pragma are compiled for speed. lapi.c below it keeps clang's
** size-optimising 'minsize' on each of its functions (what -Oz gives every function), so its own
** code stays small, but being in the unit its small functions can still be inlined into the
** speed-compiled callers (an inlining decision follows the caller's attributes). The whole of
** lapi.c at -O2 would cost about 11 KB more code; lgc.c, lmem.c, lfunc.c, ltm.c, lstring.c in
** the unit were measured too and cost more bytes than the budget leaves (docs/performance.md).
*/
#include "core/lvm.c"
/* OP_SETFIELD's table store, most of n-body's time out of luaV_execute when it was a call. */
LUAI_FUNC int luaH_psetshortstr (Table *t, TString *key, TValue *val)
  __attribute__((always_inline));
#include "core/ltable.c"
#include "core/ldo.c"
#include "core/ltablib.c"
#pragma clang attribute push (__attribute__((minsize)), apply_to = function)
#include "core/lapi.c"
#pragma clang attribute pop
