// The autotuner's progress: on a terminal one line redrawn in place,
//
//   timing     [##########..........]  20/40  best 0.412 ms block_M=128,block_N=64  ~0:09 left
//
// and elsewhere (a pipe, a log file) one plain line a config, so a log reads top to bottom:
//
//   tune: timing 20/40 block_M=128,block_N=128: ok 0.503 ms (best 0.412 ms block_M=128,block_N=64)
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "autotune_internal.h"

namespace tg::autotune_detail {
namespace {

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 0.01 ? "%.2e ms" : "%.4g ms", ms);
  return buf;
}

std::string clock_text(double seconds) {
  const long s = long(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

TuneProgress pick_mode(TuneProgress asked, std::ostream* os) {
  if (asked != TuneProgress::Auto) return asked;
  return os == &std::cerr && ::isatty(STDERR_FILENO) ? TuneProgress::Bar : TuneProgress::Lines;
}

}  // namespace

Progress::Progress(TuneProgress mode, std::ostream* os)
    : mode_(pick_mode(mode, os ? os : &std::cerr)), os_(os ? os : &std::cerr) {}

void Progress::start(const std::string& phase, std::size_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = phase;
  total_ = total;
  done_ = failed_ = 0;
  start_ = std::chrono::steady_clock::now();
  if (mode_ == TuneProgress::Lines) *os_ << "tune: " << phase_ << " " << total_ << " config(s)" << std::endl;
  if (mode_ == TuneProgress::Bar) draw(nullptr);
}

void Progress::step(const TuneTrial& trial, const TuneTrial* best) {
  std::lock_guard<std::mutex> lock(mu_);
  ++done_;
  failed_ += trial.status != TuneStatus::Ok;
  if (mode_ == TuneProgress::Bar) return draw(best);
  if (mode_ != TuneProgress::Lines) return;
  // Compiling: only failures are news (their reason); timing: every config compiled.
  const bool timing = phase_ == "timing";
  if (!timing && trial.status == TuneStatus::Ok) return;
  if (timing && (trial.status == TuneStatus::BuildFailed || trial.status == TuneStatus::CompileFailed))
    return;
  *os_ << "tune: " << phase_ << " " << done_ << "/" << total_ << " " << format_config(trial.config) << ": "
       << status_name(trial.status);
  if (trial.status == TuneStatus::Ok && timing) *os_ << " " << ms_text(trial.time.median_ms);
  if (trial.status != TuneStatus::Ok) *os_ << " (" << trial.reason.substr(0, trial.reason.find('\n')) << ")";
  if (timing && best)
    *os_ << " (best " << ms_text(best->time.median_ms) << " " << format_config(best->config) << ")";
  *os_ << std::endl;
}

void Progress::draw(const TuneTrial* best) {
  constexpr std::size_t width = 20;
  const std::size_t filled = total_ ? done_ * width / total_ : width;
  std::string line = "\r\033[K" + phase_;
  line.resize(std::max<std::size_t>(line.size(), 15), ' ');
  line += "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + std::to_string(done_) +
          "/" + std::to_string(total_);
  if (failed_) line += "  " + std::to_string(failed_) + " failed";
  if (best) line += "  best " + ms_text(best->time.median_ms) + " " + format_config(best->config);
  if (done_ > 0 && done_ < total_) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    line += "  ~" + clock_text(elapsed / double(done_) * double(total_ - done_)) + " left";
  }
  // A line longer than the terminal would wrap, and \r would then redraw only its last row.
  struct winsize ws {};
  if (os_ == &std::cerr && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 &&
      line.size() > std::size_t(ws.ws_col) + 4)  // + 4: "\r\033[K" takes no columns
    line.resize(std::size_t(ws.ws_col) + 4 - 1);
  *os_ << line << std::flush;
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == TuneProgress::Bar) *os_ << "\n" << std::flush;
}

void Progress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_ == TuneProgress::Bar) *os_ << "\r\033[K";  // over a bar left undrawn
  if (mode_ != TuneProgress::None) *os_ << "tune: " << line << std::endl;
}

}  // namespace tg::autotune_detail
