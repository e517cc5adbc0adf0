-- TEMPORARY: the bridge stub evaluates a whole source as one Lua chunk (no Markdown yet).
-- build.sh example runs this to show the plumbing until the real engine is merged.
local words = {}
for w in ("rivers carry the mountains down"):gmatch("%a+") do words[#words + 1] = w:upper() end
return table.concat(words, " ") .. " (" .. _VERSION .. ", stub bridge)"
