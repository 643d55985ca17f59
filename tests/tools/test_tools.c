/* Success forms: real programs keep working inside credfence run with a fake
 * HOME. A tool that is missing skips locally and fails under CI=true. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_test.h"

CF_SUITE_STATE()

static void setup(void)
{
	cf_suite_setup();
	cf_test_require_landlock();
}

TestSuite(tools, .init = setup, .fini = cf_suite_teardown, .timeout = 120 * CF_TIMEOUT_SCALE);

static const char *const quiet_npm[] = {"npm_config_update_notifier=false",
					"npm_config_fund=false", "npm_config_audit=false", NULL};

static void version_of(const char *tool)
{
	const char *path = cf_test_require_tool(tool);
	char full[PATH_MAX];
	cf_fx_fmt(full, sizeof full, "%s", path);
	fenced(&o, &fx, quiet_npm, NULL, CF_ARGV(full, "--version"));
	cr_expect_eq(o.status, 0, "%s --version\n" OUT_FMT, tool, OUT_ARGS(o));
	cr_expect(strlen(o.out) + strlen(o.err) > 0, "%s printed nothing", tool);
	cf_fx_assert_no_marker(&fx, &o);
}

Test(tools, gcc_version) { version_of("gcc"); }
Test(tools, python3_version) { version_of("python3"); }
Test(tools, git_version) { version_of("git"); }
Test(tools, node_version) { version_of("node"); }
Test(tools, npm_version) { version_of("npm"); }
Test(tools, cargo_version) { version_of("cargo"); }
Test(tools, rustc_version) { version_of("rustc"); }

static void sh(const char *script)
{
	fenced(&o, &fx, quiet_npm, NULL, CF_ARGV("sh", "-c", (char *)script));
}

Test(tools, git_init_add_commit_in_the_workspace)
{
	cf_test_require_tool("git");
	cf_fx_write(cf_fx_at(fx.ws, "repo/file.txt"), "tracked\n");
	sh("cd repo && git init -q && git add file.txt && "
	   "git -c user.name=cf -c user.email=cf@example.invalid commit -q -m first && "
	   "git log --format=%s");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "first"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(tools, make_and_gcc_build_a_program)
{
	cf_test_require_tool("make");
	cf_test_require_tool("gcc");
	cf_fx_write(cf_fx_at(fx.ws, "prog/hello.c"),
		    "#include <stdio.h>\nint main(void) { puts(\"hello-ok\"); return 0; }\n");
	cf_fx_write(cf_fx_at(fx.ws, "prog/Makefile"),
		    "hello: hello.o\n\tgcc -o $@ hello.o\nhello.o: hello.c\n\tgcc -O1 -c hello.c\n");
	sh("cd prog && make -s && ./hello");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "hello-ok"), OUT_FMT, OUT_ARGS(o));
}

Test(tools, cargo_build_of_a_crate_without_dependencies)
{
	const char *cargo = cf_test_require_tool("cargo");
	cf_fx_write(cf_fx_at(fx.ws, "crate/Cargo.toml"),
		    "[package]\nname = \"cfcrate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n"
		    "[dependencies]\n");
	cf_fx_write(cf_fx_at(fx.ws, "crate/src/main.rs"),
		    "fn main() { println!(\"cfcrate-ok\"); }\n");
	/* The real CARGO_HOME is read only inside; give cargo a writable one in the
	 * workspace, set only inside (credfence would deny its credentials files,
	 * which would overlap the workspace). RUSTUP_HOME stays the real one. */
	char script[PATH_MAX * 3];
	cf_fx_fmt(script, sizeof script,
		  "cd crate && CARGO_HOME=%s/.cargo-home %s build --offline -q && ./target/debug/cfcrate",
		  fx.ws, cargo);
	sh(script);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cfcrate-ok"), OUT_FMT, OUT_ARGS(o));
}

Test(tools, npm_ci_offline_with_a_local_file_dependency)
{
	cf_test_require_tool("npm");
	cf_test_require_tool("node");
	const char *src = getenv("CREDFENCE_SOURCE");
	cr_assert(src, "CREDFENCE_SOURCE is not set; run with meson test");
	struct cf_fx_out cp;
	char from[PATH_MAX];
	cf_fx_fmt(from, sizeof from, "%s/tests/tools/npm-fixture", src);
	cf_fx_run(&cp, NULL, NULL, NULL, CF_ARGV("cp", "-r", from, (char *)cf_fx_at(fx.ws, "npm")));
	cr_assert_eq(cp.status, 0, "%s", cp.err);
	cf_fx_out_free(&cp);
	sh("cd npm && npm ci --offline && node -e 'console.log(require(\"cf-dep\"))'");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "cf-dep-ok"), OUT_FMT, OUT_ARGS(o));
	cf_fx_assert_no_marker(&fx, &o);
}

Test(tools, writes_to_the_workspace_and_tmp)
{
	char tmp[PATH_MAX];
	cf_fx_fmt(tmp, sizeof tmp, "/tmp/credfence-test-%s", fx.tag + 7);
	char a[PATH_MAX + 16], c[PATH_MAX + 16];
	cf_fx_fmt(a, sizeof a, "create:%s/new.txt", fx.ws);
	cf_fx_fmt(c, sizeof c, "create:%s", tmp);
	fenced(&o, &fx, NULL, NULL, CF_ARGV(CF_PROBE, a, c));
	unlink(tmp);
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "create %s/new.txt: OK", fx.ws), OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "create %s: OK", tmp), OUT_FMT, OUT_ARGS(o));
	char *t = cf_fx_slurp(cf_fx_at(fx.ws, "new.txt"));
	cr_expect(t && strcmp(t, "x") == 0, "the file was written");
	free(t);
	cf_fx_out_free(&o);
	sh("mkdir -p sub/dir && echo data > sub/dir/f && rm -r sub && echo ws-ok");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "ws-ok"));
}

Test(tools, echo_to_dev_null)
{
	sh("echo x > /dev/null && echo devnull-ok");
	cr_expect_eq(o.status, 0, OUT_FMT, OUT_ARGS(o));
	cr_expect(has_line(o.out, "devnull-ok"));
	cf_fx_out_free(&o);
	char node[64], script[128];
	cf_fx_fmt(node, sizeof node, "/dev/cf-test-%s", fx.tag + 7);
	cf_fx_fmt(script, sizeof script, "touch %s", node);
	sh(script);
	bool made = access(node, F_OK) == 0;
	unlink(node);
	cr_expect_neq(o.status, 0, "nothing may be created in /dev");
	cr_expect(!made, "%s was created", node);
}
