// The report's section renderers (one file each, report_<name>.cc), called by
// RenderRun in report order for every section present in
// RunResults::sections. Each reads its section object and the rows it owns
// and appends Markdown (and plot files) to `out`. Internal to render/.
#ifndef SECMODE_RENDER_REPORT_SECTIONS_H_
#define SECMODE_RENDER_REPORT_SECTIONS_H_

#include <nlohmann/json.hpp>

#include "harness/results.h"
#include "render/report.h"

namespace secmode::render {

// An integer field of a section object or row; 0 when absent.
inline int64_t IntField(const nlohmann::json& j, const char* key) {
  return j.value(key, int64_t{0});
}

void RenderScalingSection(const harness::RunResults& r, const nlohmann::json& section,
                          Rendered& out);
void RenderGssSection(const harness::RunResults& r, const nlohmann::json& section, Rendered& out);
void RenderSmbSection(const harness::RunResults& r, const nlohmann::json& section, Rendered& out);
void RenderSmbE2eSection(const harness::RunResults& r, const nlohmann::json& section,
                         Rendered& out);
void RenderE2eSection(const harness::RunResults& r, const nlohmann::json& section, Rendered& out);
void RenderPredictionsSection(const harness::RunResults& r, const nlohmann::json& section,
                              Rendered& out);  // report_predict.cc
void RenderLabSection(const harness::RunResults& r, const nlohmann::json& section,
                      Rendered& out);  // report_lab.cc
void RenderSmbLabSection(const harness::RunResults& r, const nlohmann::json& section,
                         Rendered& out);  // report_lab.cc
void RenderWindowsSection(const harness::RunResults& r, const nlohmann::json& section,
                          Rendered& out);
void RenderNconnectSection(const harness::RunResults& r, const nlohmann::json& section,
                           Rendered& out);
void RenderValidationSection(const harness::RunResults& r, const nlohmann::json& section,
                             Rendered& out);
void RenderNoiseFloorSection(const harness::RunResults& r, const nlohmann::json& section,
                             Rendered& out);  // report_noise.cc
void RenderTraceSection(const harness::RunResults& r, const nlohmann::json& section,
                        Rendered& out);  // report_trace.cc

}  // namespace secmode::render

#endif  // SECMODE_RENDER_REPORT_SECTIONS_H_
