# step SECONDS WHAT COMMAND...: runs COMMAND; a failure, or a run longer than SECONDS (a hang),
# stops the script with a line naming WHAT. Sourced by .ci/run and .ci/consumer/run.sh.
step() {
  local limit=$1 what=$2 started=$SECONDS status=0
  shift 2
  echo "== $what (at most ${limit} s)"
  timeout --kill-after=10 "$limit" "$@" || status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "FAILED: $what did not finish within ${limit} s (a hang?)" >&2
    exit 1
  elif [ "$status" -ne 0 ]; then
    echo "FAILED: $what (exit code $status)" >&2
    exit "$status"
  fi
  echo "== $what: done in $((SECONDS - started)) s"
}
