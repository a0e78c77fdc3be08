# docs/model.md (model v3.0.7) written as an awk program the way upstream's compact_dp.awk
# computes it: K re-summed for every k, so O(n^2).  For benchmarks/bench.py
# --awk-program: the real upstream program is not in this repository.
{
    n = NR
    len_[n] = length($0)
    size[n] = int((len_[n] + 3) / 4) + 1
    T += size[n]
    user[n] = (index($0, "\"role\":\"user\"") > 0 && index($0, "\"content\":[") == 0)
}
END {
    if (NR == 0) { print 0; exit 0 }
    if (e_fixed > 0) E = e_fixed
    else if (baseline_e > 0) {
        remaining = baseline_e - t
        floor_ = (baseline_e > 1) ? int(baseline_e / 2) : 2
        E = (remaining > floor_) ? remaining : floor_
    } else E = 2
    if (L_fixed > 0) L = L_fixed
    else if (t > 0 && total_requests > 0) L = total_requests / t
    else L = 5
    if (L < 1) L = 1
    if (total_requests > 0 && total_input > 0) avg = total_input / total_requests
    else avg = 4000
    c = total_compact + 0; R = E * L; l_instr = 70
    r_t = 1.0
    for (i = 1; i <= c + 1; i++) r_t = r_t * r
    if (r_t < 0.37) r_t = 0.37
    N_remain = R * avg
    info_loss = beta * (1.0 - r_t) * N_remain * p_input / 1000000
    Q = quality_penalty; if (quality_penalty == "") Q = 0.2
    M = max_context; if (max_context == "" || max_context <= 0) M = 200000
    min_keep = int(NR * min_keep_ratio + 0.5)
    if (min_keep < 3) min_keep = 3
    if (min_keep > NR) min_keep = NR
    best_k = 0; best = -1e18
    for (k = min_keep; k <= NR; k++) {
        K = 0
        for (j = NR - k + 1; j <= NR; j++) K += size[j]
        H = T - K
        if (H <= 0) continue
        savings = (R - 1) * p_cache * H / 1000000
        cache_miss = (S + K) * (p_input - p_cache) / 1000000
        compact_cost = (p_cache * (V + H) + p_input * l_instr + p_out * S) / 1000000
        quality = Q * p_input * ((V + T) * (V + T) - (V + K) * (V + K)) / (M * 1000000)
        benefit = savings - cache_miss - compact_cost - info_loss + quality
        if (benefit > best) { best = benefit; best_k = k }
    }
    if (best > 0) {
        adj = best_k; cut = NR - adj + 1
        while (cut > 1 && !user[cut]) { cut--; adj = NR - cut + 1 }
        print adj
    } else print 0
}
