/* Runvil build: replaces Lua's ldblib.c in the build-produced lua-src copy (see tools/vendor.mjs).
 * The sandbox never opens the debug library (DECISIONS.md, "Section VMs and the
 * sandbox"), but mlua links every luaopen_* function; this stub keeps the module small. */
#define LUA_LIB
#include "lprefix.h"
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

LUAMOD_API int luaopen_debug (lua_State *L) {
  return luaL_error(L, "the debug library is not part of the Runvil sandbox");
}
