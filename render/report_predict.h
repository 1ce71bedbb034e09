// `secmode predict` drawn from its JSON document (sim/workload_model.h's
// rows, cli/command_predict.cc's document): per job a terminal table of the
// modes, or Markdown.
#ifndef SECMODE_RENDER_REPORT_PREDICT_H_
#define SECMODE_RENDER_REPORT_PREDICT_H_

#include <nlohmann/json.hpp>
#include <string>

namespace secmode::render {

std::string PredictionsText(const nlohmann::json& doc);
// `secmode predict --explain` (harness::ExplainPublished's document).
std::string ExplanationText(const nlohmann::json& doc);

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_PREDICT_H_
