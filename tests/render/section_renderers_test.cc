// Every suite section has a renderer, as Google Benchmark's output tests hold
// every reporter to the benchmarks' output: a section added to kSections
// (suite/suite.cc) without a line in kRenderers (render/report.cc) fails
// here. And a section the renderers do not know (results.json from a newer
// secmode) is named in the report and its warnings, not dropped.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/results.h"
#include "render/report.h"
#include "suite/section.h"
#include "suite/suite.h"

namespace secmode::render {
namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(SectionRenderersTest, EverySuiteSectionHasARenderer) {
  const std::vector<std::string> sections = suite::SectionNames();
  ASSERT_FALSE(sections.empty());
  const std::vector<std::string> drawn = DrawnSections();
  for (const std::string& name : sections) {
    EXPECT_TRUE(Contains(drawn, name))
        << "suite section \"" << name
        << "\" has no renderer: add its report_<name>.cc and a line in kRenderers "
           "(render/report.cc)";
  }
}

TEST(SectionRenderersTest, EveryRendererDrawsASuiteSection) {
  std::vector<std::string> sections = suite::SectionNames();
  sections.push_back(suite::kNoiseFloorSection);  // RunSuite's own
  sections.push_back(render::kTraceSection);      // secmode trace --out's
  for (const std::string& name : DrawnSections()) {
    EXPECT_TRUE(Contains(sections, name))
        << "renderer of \"" << name << "\", which no suite section writes";
  }
}

TEST(SectionRenderersTest, ASectionWithNoRendererIsNamedInTheReportAndItsWarnings) {
  harness::RunResults r;
  r.sections["from-a-newer-secmode"] = {{"rows", nlohmann::json::array({{{"a", 1}}})}};
  r.sections["windows"] = {{"peers", nlohmann::json::array()}};
  const auto out = RenderRun(r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::string note =
      "Note: results.json has sections this secmode has no renderer for: `from-a-newer-secmode` "
      "(written by a newer secmode, or edited): not drawn; their data is in results.json.";
  EXPECT_NE(out->report_md.find(note), std::string::npos) << out->report_md;
  ASSERT_EQ(out->warnings.size(), 1u);
  EXPECT_NE(out->warnings[0].find("from-a-newer-secmode"), std::string::npos) << out->warnings[0];
  EXPECT_EQ(out->warnings[0].find("windows"), std::string::npos) << out->warnings[0];
}

// A section that is not an object (one that failed before it wrote
// anything, or an edited file) is named, and the rest is still drawn.
TEST(SectionRenderersTest, ASectionThatIsNotAnObjectIsNamedAndTheRestDrawn) {
  harness::RunResults r;
  r.sections["smb-e2e"] = nullptr;
  r.sections["windows"] = {{"peers", nlohmann::json::array()}};
  const auto out = RenderRun(r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_NE(out->report_md.find("Note: results.json section `smb-e2e` is null, not an object: "
                                "not drawn."),
            std::string::npos)
      << out->report_md;
  ASSERT_EQ(out->warnings.size(), 1u);
  EXPECT_NE(out->warnings[0].find("smb-e2e"), std::string::npos) << out->warnings[0];
}

TEST(SectionRenderersTest, ADrawnSectionGoesWithoutANote) {
  harness::RunResults r;
  r.sections["windows"] = {{"peers", nlohmann::json::array()}};
  const auto out = RenderRun(r);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->report_md.find("no renderer"), std::string::npos) << out->report_md;
  EXPECT_TRUE(out->warnings.empty());
}

}  // namespace
}  // namespace secmode::render
