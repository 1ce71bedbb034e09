// The lab validation (suite/lab_validation.h) drawn from its JSON object,
// sections["lab"] of a run or `secmode lab`'s document: the links as
// measured, every point predicted vs measured, the points outside the
// tolerance with their reason, the modes' order, the summary. Markdown;
// `secmode lab` prints the same text.
#ifndef SECMODE_RENDER_REPORT_LAB_H_
#define SECMODE_RENDER_REPORT_LAB_H_

#include <nlohmann/json.hpp>
#include <string>

namespace secmode::render {

std::string LabMarkdown(const nlohmann::json& lab);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_LAB_H_
