/*
** The Lua VM's hot core as one translation unit (docs/performance.md, "Cross-file inlining").
**
** Why: compiled one file at a time, clang cannot inline a small function of one file into a caller
** in another: luaV_execute calls luaH_getshortstr, luaH_getint, luaT_gettmbyobj, luaC_step,
** luaD_precall, ... out of line, where wasmoon's emcc build (whole-module wasm-opt -O3) inlines
** them. Lua's sources are written to be compiled as one unit (Lua's own onelua.c does it for all
** of them), so including these files here gives clang the same reach without changing a line of
** them.
**
** How: build.sh (setup_lua_src) moves every file named in an #include "core/..." line below
** into the copy's core/ folder, where lua-src's build (which compiles every .c file of the source
** folder) does not see it, so each is compiled exactly once, here. wasm-support/wasm-cc compiles
** this file for speed (RUNVIL_SPEED_FILES). The list is the one place that says which files are
** in the unit.
*/
#include "core/lvm.c"
#include "core/ltable.c"
#include "core/ldo.c"
#include "core/ltablib.c"
#pragma clang attribute push (__attribute__((minsize)), apply_to = function)
#include "core/lapi.c"
#pragma clang attribute pop
