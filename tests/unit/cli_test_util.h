// Running the built tilegen command from a unit test, as a user runs it (test_cli.cpp,
// test_autotune.cpp).
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace tg::test {

struct CliResult {
  int status = -1;
  std::string out;  // stdout and stderr together
};

inline std::string tilegen_path() { return std::string(TILEGEN_BINARY_DIR) + "/bin/tilegen"; }

// Runs `env ENV tilegen ARGS` (ENV may be empty); the exit status, 128 + the signal when killed.
inline CliResult tilegen_env(const std::string& env, const std::string& args) {
  CliResult r;
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + tilegen_path() + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE_MESSAGE(pipe, "cannot run ", cmd);
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace tg::test
