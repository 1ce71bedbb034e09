// `secmode noise` drawn: the A/A test's false-positive rate and the
// run-to-run noise of its rows (harness/aa_test.h), for a terminal.
#ifndef SECMODE_RENDER_REPORT_NOISE_H_
#define SECMODE_RENDER_REPORT_NOISE_H_

#include <string>

#include "harness/aa_test.h"

namespace secmode::render {

// The runs, the verdicts' false-positive rate (with how many rows were
// tested), per table the median and the largest run-to-run spread and the
// change two single runs must show to stand out of it, the `rows`
// noisiest rows, and how far the validation's verdicts repeated (the points
// that changed, with their verdict in each run, A1 B1 A2 B2 ...).
std::string NoiseText(const harness::AaResult& r, size_t rows = 10);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_NOISE_H_
