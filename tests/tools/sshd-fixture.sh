#!/bin/sh
# A private sshd and ssh-agent for the git-over-ssh test (issue 24), all in
# DIR: a host key, a client key made for the test, its authorized_keys, a
# bare repository with one commit, sshd_config, and HOME_DIR/.ssh/known_hosts
# naming the host key. No system file is read or changed, except that a root
# sshd needs its privilege-separation directory /run/sshd (made empty when
# missing, as the Debian package does at service start).
# Usage: sshd-fixture.sh DIR PORT HOME_DIR. Prints SSH_AUTH_SOCK=..., or
# "unavailable: WHY" and exits 77.
set -eu
dir=$1 port=$2 home=$3
sshd=/usr/sbin/sshd
unavailable() { echo "unavailable: $1"; exit 77; }
[ -x "$sshd" ] || unavailable "no $sshd (scripts/setup installs openssh-server)"
for t in ssh ssh-keygen ssh-agent ssh-add git; do
	command -v "$t" >/dev/null 2>&1 || unavailable "no $t (scripts/setup installs it)"
done
user=$(id -un)
shell=$(getent passwd "$user" | cut -d: -f7)
case $shell in
*/nologin | */false) unavailable "the login shell of $user is $shell: sshd runs every command through it" ;;
esac
mkdir -p "$dir"
ssh-keygen -q -t ed25519 -N '' -C cf-host -f "$dir/host_key"
ssh-keygen -q -t ed25519 -N '' -C cf-client -f "$dir/client_key"
cp "$dir/client_key.pub" "$dir/authorized_keys"
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_key.pub")" >"$home/.ssh/known_hosts"
cat >"$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
PermitUserRC no
PermitUserEnvironment no
AllowTcpForwarding no
X11Forwarding no
PrintMotd no
LogLevel ERROR
CONF
if [ "$(id -u)" = 0 ] && [ ! -d /run/sshd ]; then
	mkdir -m 0755 /run/sshd
fi
"$sshd" -t -f "$dir/sshd_config" 2>"$dir/sshd.check" || unavailable "sshd -t: $(cat "$dir/sshd.check")"
# Without -D sshd goes to the background once it listens.
"$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log" || unavailable "sshd did not start: $(cat "$dir/sshd.log")"
eval "$(ssh-agent -s -a "$dir/agent.sock")" >/dev/null
echo "$SSH_AGENT_PID" >"$dir/agent.pid"
ssh-add -q "$dir/client_key" 2>"$dir/ssh-add.log" || unavailable "ssh-add: $(cat "$dir/ssh-add.log")"
# The repository served, with one commit made here.
git init -q --bare "$dir/repo.git"
git init -q "$dir/src"
echo served-over-ssh-CFGIT >"$dir/src/README"
git -C "$dir/src" add README
git -C "$dir/src" -c user.name=cf -c user.email=cf@example.invalid commit -q -m over-ssh
git -C "$dir/src" push -q "$dir/repo.git" HEAD:refs/heads/main
git -C "$dir/repo.git" symbolic-ref HEAD refs/heads/main
echo "SSH_AUTH_SOCK=$dir/agent.sock"
echo "USER=$user"
