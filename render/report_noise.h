// `secmode noise` drawn: the A/A test's false-positive rate and the
// run-to-run noise of its rows (harness/aa_test.h), for a terminal.
#ifndef SECMODE_RENDER_REPORT_NOISE_H_
#define SECMODE_RENDER_REPORT_NOISE_H_

#include <string>

#include "harness/aa_test.h"

namespace secmode::render {

// The runs, the verdicts' false-positive rate (with how many rows were
// tested), per table the median and the largest run-to-run spread and the
// change two single runs must show to stand out of it, and the `rows`
// noisiest rows.
std::string NoiseText(const harness::AaResult& r, size_t rows = 10);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_NOISE_H_
