// The parts of the validation's report (report_validation.cc), one function
// per part, each its Markdown drawn from the section object and its rows
// (the `nconnect` rows of kind "validation"). Internal to render/.
#ifndef SECMODE_RENDER_REPORT_VALIDATION_PARTS_H_
#define SECMODE_RENDER_REPORT_VALIDATION_PARTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace secmode::render {

using ValidationRows = std::vector<const nlohmann::json*>;

// report_validation_calibration.cc: the heading and what the simulator is
// fed (the calibration, with or without the thread model).
std::string CalibrationMarkdown(const nlohmann::json& section, const ValidationRows& rows);

// report_validation_paths.cc: where the traced real runs' violations come
// from, how their connections were replaced and contexts re-created, the
// model's stages and threads beside the real ones, and the ablation. Each
// is empty when no row has what it shows.
std::string AttributionMarkdown(const ValidationRows& rows);
std::string ReconnectsMarkdown(const ValidationRows& rows);
std::string RecreationsMarkdown(const ValidationRows& rows);
std::string ModelPathsMarkdown(const ValidationRows& rows);
std::string AblationMarkdown(const ValidationRows& rows);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_VALIDATION_PARTS_H_
