// The smb-e2e section's rows from its repeated runs: each figure's median
// and range over the repetitions, the change against smb-plain paired by
// repetition, and how much of the mode's extra CPU per operation its crypto
// explains.
//
// Pairing: repetition i of a mode ran right after repetition i of
// smb-plain of the same case (the section interleaves the modes within a
// repetition), so the change is taken per repetition (mode_i / plain_i - 1)
// and its median, minimum and maximum reported: a ratio measured side by
// side, not two medians taken minutes apart.
//
// What the crypto explains, the model of suite/e2e_from_legs.h for SMB:
// client and server share this machine, so a run's busy CPU per operation
// (harness::BusyCpuNsPerCall: logical CPUs x (1 - idle - steal) x seconds /
// operations) is both ends and the kernel together. A mode's extra CPU per
// operation end to end is, pair by pair, its run's busy CPU per operation
// minus its smb-plain partner's (median and range over the pairs). The
// crypto's is the four legs' extra cost over smb-plain's legs (micro rows,
// one thread: sim::LegsExtraAt) at the payload each message carries (a
// WRITE's request, a READ's response; a metadata operation's none, costed
// at the smallest measured size). The server's two legs are secmode's own
// (OpenSSL) code standing in for Samba's crypto, which is not measured
// apart. The share is legs / end-to-end extra (median), given only when
// every pair shows extra CPU (else the extra is within the runs' noise):
// near 1, secmode's crypto accounts for the cost; well below, something
// costs more than secmode's legs say, first of all Samba's own crypto (its
// library, not OpenSSL) and its per-message work in the mode; above 1,
// less extra CPU showed up than the legs cost. The predicted rate is, per
// pair, the run's busy CPU time at its partner's CPU per operation plus the
// legs' extra (median over the pairs).
#ifndef SECMODE_SUITE_SMB_E2E_SUMMARY_H_
#define SECMODE_SUITE_SMB_E2E_SUMMARY_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "harness/results.h"

namespace secmode::suite {

// `runs`: harness::SmbLoadReportJson objects, each with "repetition" (0,
// 1, ...). One row per mode, op, size and channels, in the order of the
// first run of each: mode, op, size, channels, outstanding, dialect,
// repetitions, figure ("mb_per_second", or "ops_per_second" for metadata);
// ops_per_second, mb_per_second, p50_us, p99_us (medians over the
// repetitions) with ops_per_second_range / mb_per_second_range [min, max];
// ops, errors, first_error, requests, signed_requests, encrypted_requests,
// responses_verified, responses_decrypted (summed); runs (the runs as
// given); vs_plain {median, min, max, pairs} (fractions; not for
// smb-plain, nor without a plain run of the same case and repetition);
// from_legs {call_payload, reply_payload, pairs, plain_cpu_ns_per_op,
// measured_cpu_ns_per_op, extra_cpu_ns_per_op (+ _range [min, max]),
// legs_extra_ns, crypto_share (null within noise),
// predicted_ops_per_second, measured_over_predicted} or
// from_legs_skipped (the reason: no micro rows of the mode, the machine's
// idle time not measured, ...).
nlohmann::json SummarizeSmbE2e(const nlohmann::json& runs,
                               const std::vector<harness::MicroRow>& micro, int logical_cpus);

}  // namespace secmode::suite

#endif  // SECMODE_SUITE_SMB_E2E_SUMMARY_H_
