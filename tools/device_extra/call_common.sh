# call_common.sh — sourced by the one-call device scripts after they set L (the log folder) and
# LATE_S (seconds after which their optional steps are skipped): L/x for text logs (tarred at the
# end: a call returns at most eight files), B the build folder, CUDA's tools on PATH, `late`, and
# `t CMD...` (a step of at most 200 s, its start time and exit code in the log).
set -u
mkdir -p "$L/x"
B=build-wg
export PATH=/usr/local/cuda/bin:$PATH
START=$(date +%s)
late() { [ $(($(date +%s) - START)) -gt "$LATE_S" ]; }
t() { echo "== $(date +%T) $*"; timeout 200 "$@" 2>&1; echo "== exit $?"; }
