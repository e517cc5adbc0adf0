/* Runvil build: replaces Lua's liolib.c in the build-produced lua-src copy (see tools/vendor.mjs).
 * The sandbox never opens the io library (DECISIONS.md, "Section VMs and the
 * sandbox"), but mlua links every luaopen_* function; this stub keeps the module small. */
#define LUA_LIB
#include "lprefix.h"
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

LUAMOD_API int luaopen_io (lua_State *L) {
  return luaL_error(L, "the io library is not part of the Runvil sandbox");
}
