# shellcheck shell=bash
# compact-dp hooks for bash agents.  Source this file after the agent's own functions:
#
#     source /path/to/compact-dp/agent_hooks/bash-agent.sh
#
# It (re)defines
#   store_conv_dp_decision  t total_requests total_compact total_input baseline_e e_fixed
#                           L_fixed V p_input p_cache p_out S min_keep_ratio r beta
#                           max_context quality_penalty
#       prints the lines to keep (0 = do not compact), byte-identical to compact_dp.awk;
#   store_conv_turn_keep    [RATIO]
#       prints the lines the forced-compaction fallback keeps (compact_turn_keep.awk);
#   compact_dp_policy       TRIGGER CONTEXT_TOKENS [t total_requests total_compact total_input]
#       the whole policy of SPEC §6 in one call: prints the lines to keep and returns 0 when
#       the agent should compact now, prints 0 and returns 1 when it should not.
#
# All read the conversation from "$CONV_FILE" (never write it).  Settings:
#   COMPACT_DP_BIN    the command to run (default: compact-dp on PATH)
#   COMPACT_DP_MODEL  v3.0.7 (default), v2, v4.2
#   DP_* and MAX_CONTEXT_TOKENS, as in bash-agent, for every argument left empty.
# Safe under `set -euo pipefail`: nothing here reads an unset variable or fails a pipeline;
# each function returns compact-dp's exit status (use `keep=$(…) || true` like bash-agent).

# A file operand that looks like name=value would be an awk assignment: make it a path.
_compact_dp_file() {
    case "$1" in
        -) printf '%s' "$1" ;;
        [A-Za-z_]*=*) case "${1%%=*}" in
                          *[!A-Za-z0-9_]*) printf '%s' "$1" ;;
                          *) printf './%s' "$1" ;;
                      esac ;;
        *) printf '%s' "$1" ;;
    esac
}

_compact_dp_conv() {
    if [ -z "${CONV_FILE:-}" ]; then
        echo "compact-dp hooks: CONV_FILE is not set" >&2
        return 2
    fi
    _compact_dp_file "$CONV_FILE"
}

store_conv_dp_decision() {
    local conv
    conv=$(_compact_dp_conv) || return 2
    "${COMPACT_DP_BIN:-compact-dp}" --model "${COMPACT_DP_MODEL:-v3.0.7}" \
        -v "t=${1:-0}" \
        -v "total_requests=${2:-0}" \
        -v "total_compact=${3:-0}" \
        -v "total_input=${4:-0}" \
        -v "baseline_e=${5:-${DP_BASELINE_E:-8}}" \
        -v "e_fixed=${6:-${DP_E_FIXED:-0}}" \
        -v "L_fixed=${7:-${DP_L:-0}}" \
        -v "V=${8:-${DP_V:-5000}}" \
        -v "p_input=${9:-${DP_P_INPUT:-3.0}}" \
        -v "p_cache=${10:-${DP_P_CACHE:-0.30}}" \
        -v "p_out=${11:-${DP_P_OUT:-15.0}}" \
        -v "S=${12:-${DP_S:-500}}" \
        -v "min_keep_ratio=${13:-${DP_MIN_KEEP_RATIO:-0.12}}" \
        -v "r=${14:-${DP_R:-0.8}}" \
        -v "beta=${15:-${DP_BETA:-0.03}}" \
        -v "max_context=${16:-${MAX_CONTEXT_TOKENS:-200000}}" \
        -v "quality_penalty=${17:-${DP_QUALITY_PENALTY:-0.2}}" \
        -f compact_dp.awk -- "$conv"
}

store_conv_turn_keep() {
    local conv
    conv=$(_compact_dp_conv) || return 2
    "${COMPACT_DP_BIN:-compact-dp}" -v "ratio=${1:-${DP_MIN_KEEP_RATIO:-0.12}}" \
        -f compact_turn_keep.awk -- "$conv"
}

compact_dp_policy() {
    local conv
    conv=$(_compact_dp_conv) || return 2
    "${COMPACT_DP_BIN:-compact-dp}" --model "${COMPACT_DP_MODEL:-v3.0.7}" \
        --trigger "${1:-auto}" --context-tokens "${2:-0}" \
        --turns "${3:-0}" --requests "${4:-0}" --compactions "${5:-0}" \
        --input-tokens "${6:-0}" -- "$conv"
}
