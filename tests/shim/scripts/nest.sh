# One level of the depth test; the text itself is in $CF_NEST. Each level
# loads the shim again (LD_PRELOAD re-exported), so that each asks the kernel
# whether it is fenced: a level that added a Landlock layer would hit the
# kernel's limit of 16 before level 20.
d=$((CF_DEPTH + 1)); export CF_DEPTH=$d
export LD_PRELOAD="$CF_T_SHIM"
if [ "$d" -lt 20 ]; then bash -c "$CF_NEST"; exit $?; fi
cat "$CF_T_KEY"; k=$?
cat "$CF_T_ALLOWED"; echo "CASE leaf depth=$d deny=$k legit=$?"
"$CF_T_PROBE"; echo "PROBE $?"
