# Writes OUTPUT, a header holding INPUT's text as `inline constexpr char NAME[]`
# (a raw string literal), so a file of the tree ships inside the binary.
# cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed_text.cmake
file(READ "${INPUT}" text)
if(text MATCHES "\\)hiera_embedded\"")
  message(FATAL_ERROR "${INPUT} contains the raw string's delimiter")
endif()
file(WRITE "${OUTPUT}.tmp" "#pragma once\n// Generated from ${INPUT} by cmake/embed_text.cmake: edit that file.\ninline constexpr char ${NAME}[] = R\"hiera_embedded(${text})hiera_embedded\";\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
