# A fake harness whose fenced children write its state: a shell snapshot in
# ~/.claude/shell-snapshots (made writable with --harness-state), its settings
# (never writable: the free harness obeys them) and read its login token
# (a secret). One line each says what worked.
c="${CLAUDE_CONFIG_DIR:-$HOME/.claude}"
bash -c 'echo "f() { :; }" > "$1/shell-snapshots/snapshot-bash-1.sh" && echo STATE-WRITE-OK' x "$c" 2>&1
bash -c 'echo "{\"hooks\":{}}" > "$1/settings.json" && echo SETTINGS-WRITE-OK' x "$c" 2>&1
bash -c 'cat "$1/.credentials.json" && echo CRED-READ-OK' x "$c" 2>&1
echo HARNESS-RAN
