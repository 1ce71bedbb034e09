#include "render/gnuplot.h"

#include "common/files.h"
#include "common/subprocess.h"

namespace secmode::render {

using common::Status;

common::Result<std::string> RunGnuplot(const std::string& script,
                                       const std::vector<std::pair<std::string, std::string>>& data,
                                       const std::string& output) {
  if (common::FindProgram("gnuplot").empty()) {
    return Status::Unavailable("gnuplot not found (Debian package gnuplot-nox)");
  }
  SECMODE_ASSIGN_OR_RETURN(std::string dir, common::MakeTempDirectory("secmode-plot-"));
  struct Cleanup {
    std::string dir;
    ~Cleanup() { (void)common::RemoveTree(dir); }
  } cleanup{dir};
  for (const auto& [name, contents] : data) {
    SECMODE_RETURN_IF_ERROR(common::WriteFileAtomically(dir + "/" + name, contents));
  }
  SECMODE_RETURN_IF_ERROR(
      common::WriteFileAtomically(dir + "/plot.gp", "cd '" + dir + "'\n" + script));
  common::Command cmd;
  cmd.argv = {"gnuplot", dir + "/plot.gp"};
  cmd.log_path = dir + "/gnuplot.log";
  SECMODE_ASSIGN_OR_RETURN(int rc, common::RunAndWait(cmd, 30000));
  if (rc != 0) {
    return Status::Internal("gnuplot exited " + std::to_string(rc) + ": " +
                            common::TailOfFile(cmd.log_path, 5));
  }
  auto out = common::ReadFile(dir + "/" + output);
  if (!out.ok() || out->empty()) {
    return Status::Internal("gnuplot wrote no " + output + ": " +
                            common::TailOfFile(cmd.log_path, 5));
  }
  return *out;
}

std::string GnuplotLine(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  return out;
}

std::string GnuplotQuote(const std::string& s) {
  std::string out = "'";
  for (char c : GnuplotLine(s)) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace secmode::render
