#include "render/run_dir.h"

#include <filesystem>

#include "common/clock.h"
#include "common/files.h"
#include "common/machine.h"
#include "render/report.h"

namespace secmode::render {

using common::Status;

namespace {

// Draws everything but results.json from the document as it will be read
// back (not from the RunResults it came from): name -> contents.
common::Result<Rendered> Draw(const nlohmann::json& doc) {
  SECMODE_ASSIGN_OR_RETURN(harness::RunResults read_back, harness::FromJson(doc));
  return RenderRun(read_back);
}

// results.json (when given) first, then micro.csv, report.md, report.html
// and the plots,
// all or none (common::WriteFilesAtomically).
common::Result<RunFiles> WriteAll(const std::string& dir, const std::string* results_json,
                                  Rendered r) {
  std::vector<std::pair<std::string, std::string>> files;
  if (results_json) files.emplace_back("results.json", *results_json);
  files.emplace_back("micro.csv", std::move(r.micro_csv));
  files.emplace_back("report.md", std::move(r.report_md));
  if (!r.report_html.empty()) files.emplace_back("report.html", std::move(r.report_html));
  for (auto& f : r.files) files.push_back(std::move(f));
  SECMODE_RETURN_IF_ERROR(common::WriteFilesAtomically(dir, files));
  RunFiles out;
  for (const auto& f : files) out.written.push_back(f.first);
  out.warnings = std::move(r.warnings);
  return out;
}

}  // namespace

std::string DefaultOutDir() {
  return "results/runs/" + common::UtcTimestamp("%Y%m%dT%H%M%SZ") + "-" + common::Hostname();
}

common::Result<RunFiles> WriteRunDirectory(const std::string& dir,
                                           const harness::RunResults& results) {
  nlohmann::json doc = harness::ToJson(results);
  SECMODE_RETURN_IF_ERROR(
      harness::ValidateResultsJson(doc).Annotate("internal: results do not validate"));
  SECMODE_RETURN_IF_ERROR(common::MakeDirectories(dir));
  const std::string results_json = doc.dump(2) + "\n";
  auto drawn = Draw(doc);
  if (!drawn.ok()) {
    // What was measured is kept even when it cannot be drawn, and the error
    // says so.
    SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/results.json", results_json));
    return common::Status(drawn.status().code(),
                          drawn.status().message() + "; " + dir + "/results.json is saved");
  }
  return WriteAll(dir, &results_json, std::move(drawn).value());
}

common::Result<RunFiles> RenderSavedRun(const std::string& dir, const std::string& out_dir) {
  const std::string path = dir + "/results.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::InvalidArgument(dir + " holds no results.json: not a secmode run directory");
  }
  SECMODE_ASSIGN_OR_RETURN(harness::RunResults saved, harness::ReadResultsFile(path));
  if (out_dir.empty() && HasUndrawnRows(saved)) {
    // Drawing in place would replace a report.md that has those parts.
    return Status::InvalidArgument(
        path +
        " predates `sections`: a report drawn from it would lack its e2e and nconnect "
        "parts, so it is not drawn over " +
        dir + "/report.md; give --out DIR to draw it elsewhere");
  }
  const std::string out = out_dir.empty() ? dir : out_dir;
  SECMODE_RETURN_IF_ERROR(common::MakeDirectories(out));
  // Read back from the file, so drawn as it reads.
  SECMODE_ASSIGN_OR_RETURN(Rendered drawn, RenderRun(saved));
  return WriteAll(out, nullptr, std::move(drawn));
}

}  // namespace secmode::render
