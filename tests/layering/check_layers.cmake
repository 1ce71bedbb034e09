# Checks that includes run one way: each folder of the project includes
# project headers only from the folders below it in the layering (README,
# "Architecture"), and only cli/ includes CLI11.
#
#   cmake -DROOT=<source tree> -P check_layers.cmake
#
# Exits non-zero listing every offending file, line and include.

cmake_minimum_required(VERSION 3.25)

# Folder -> the folders it may include from (itself is always allowed).
set(allowed_common "")
set(allowed_gss common)
set(allowed_smb common gss lab)
set(allowed_rpc common gss)
set(allowed_lab common gss)
set(allowed_sim common)
set(allowed_harness common gss lab smb rpc sim)
set(allowed_suite common gss smb rpc lab sim harness)
set(allowed_render common harness)
set(allowed_trace common rpc smb sim)
set(allowed_cli common gss smb rpc lab sim harness suite render trace)
set(allowed_bench common gss lab smb rpc sim harness trace)
# Single headers a folder may include beyond its folders: the simulator uses
# the RPC server's RFC 2203 window and its reaction below it (a target of
# their own that needs only common/).
set(allowed_files_sim rpc/sequence_window.h rpc/window_policy.h)

set(folders common gss smb rpc lab sim harness suite render trace cli bench)
set(violations "")
foreach(folder IN LISTS folders)
  file(GLOB_RECURSE sources "${ROOT}/${folder}/*.h" "${ROOT}/${folder}/*.cc"
       "${ROOT}/${folder}/*.inc")
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include")
    file(RELATIVE_PATH rel "${ROOT}" "${source}")
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*<CLI/" AND NOT folder STREQUAL "cli")
        list(APPEND violations "${rel}: ${line} (only cli/ uses CLI11)")
      endif()
      # "dir/file.h" or <dir/file.h>: the project root is an include
      # directory, so both reach a project folder.
      if(line MATCHES "#[ \t]*include[ \t]*[\"<]([^\"<>/]+)/([^\">]+)[\">]")
        set(dir "${CMAKE_MATCH_1}")
        set(header "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}")
        if(dir STREQUAL folder)
          continue()
        endif()
        if(NOT dir IN_LIST folders)
          # A system header (<openssl/evp.h>) or a folder that is no layer.
          if(line MATCHES "\"")
            list(APPEND violations "${rel}: ${line} (not a project folder)")
          endif()
          continue()
        endif()
        if(dir IN_LIST allowed_${folder} OR header IN_LIST allowed_files_${folder})
          continue()
        endif()
        list(APPEND violations "${rel}: ${line} (${folder}/ may include from: ${allowed_${folder}})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "includes that run the wrong way:\n  ${text}")
endif()
message(STATUS "includes run one way")
