#include "render/run_dir.h"

#include <filesystem>

#include "common/clock.h"
#include "common/files.h"
#include "common/machine.h"
#include "render/report.h"

namespace secmode::render {

using common::Status;

namespace {

common::Result<RunFiles> WriteRendered(const std::string& dir, const nlohmann::json& doc,
                                       RunFiles files) {
  SECMODE_ASSIGN_OR_RETURN(harness::RunResults read_back, harness::FromJson(doc));
  SECMODE_ASSIGN_OR_RETURN(Rendered r, RenderRun(read_back));
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/micro.csv", r.micro_csv));
  files.written.push_back("micro.csv");
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/report.md", r.report_md));
  files.written.push_back("report.md");
  for (const auto& [name, contents] : r.files) {
    SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/" + name, contents));
    files.written.push_back(name);
  }
  files.warnings = std::move(r.warnings);
  return files;
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
  SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/results.json", doc.dump(2) + "\n"));
  RunFiles files;
  files.written.push_back("results.json");
  return WriteRendered(dir, doc, std::move(files));
}

common::Result<RunFiles> RenderSavedRun(const std::string& dir, const std::string& out_dir) {
  const std::string path = dir + "/results.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status::InvalidArgument(dir + " holds no results.json: not a secmode run directory");
  }
  auto text = common::ReadFile(path);
  if (!text.ok()) return text.status().Annotate("cannot read " + path);
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Corrupt(path + " is not valid JSON");
  SECMODE_RETURN_IF_ERROR(harness::ValidateResultsJson(doc).Annotate(path));
  SECMODE_ASSIGN_OR_RETURN(harness::RunResults saved, harness::FromJson(doc));
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
  return WriteRendered(out, doc, RunFiles{});
}

}  // namespace secmode::render
