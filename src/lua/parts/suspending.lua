-- Not a part bootstrap.lua loads: lua/ops.rs (`bind_suspending`) loads it the first time a block
-- suspends (asks a model, the store, a tool), so entries that never wait on the host do not.
--
-- What every suspending Engine function is: a tail call to the VM's one async Rust function with
-- the op's code first, so the async function yields as if it had been called directly.
return function(f, code) return function(...) return f(code, ...) end end
