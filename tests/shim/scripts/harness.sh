# A bash script as the harness: plain commands, a subshell, a pipeline, a
# command substitution, and a background job. Prints one CASE line each.
case_line() { echo "CASE $1 deny=$2 legit=$3"; }

# Its own login: the harness reads it; the key it can not.
k=$(< "$CF_T_OWN")
[[ $k == CFMARK-* ]] && echo "HARNESS_READ ok" || echo "HARNESS_READ bad"
k=$(< "$CF_T_KEY") && echo "HARNESS_DENIED bad" || echo "HARNESS_DENIED ok"
unset k

bash -c 'cat "$CF_T_KEY"'; d=$?
cat "$CF_T_ALLOWED"; l=$?
case_line command $d $l

(bash -c 'cat "$CF_T_KEY"'); d=$?
(cat "$CF_T_ALLOWED"); l=$?
case_line subshell $d $l

bash -c 'cat "$CF_T_KEY"' | cat; d=${PIPESTATUS[0]}
cat "$CF_T_ALLOWED" | cat; l=${PIPESTATUS[0]}
case_line pipeline $d $l

out=$(bash -c 'cat "$CF_T_KEY"'); d=$?; echo -n "$out"
out=$(cat "$CF_T_ALLOWED"); l=$?; echo "$out"
case_line substitution $d $l

bash -c 'cat "$CF_T_KEY"' & wait $!; d=$?
cat "$CF_T_ALLOWED" & wait $!; l=$?
case_line background $d $l
