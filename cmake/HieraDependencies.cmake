# Every third-party dependency, found from the system (Debian packages here,
# the image's packages on the GPU machine). Nothing is downloaded.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED)            # header-only Asio
find_package(CLI11 REQUIRED)
find_package(CURL REQUIRED)

# CUDA toolkit: compile and link GPU code wherever the toolkit is; running it needs a GPU.
set(HIERA_HAVE_CUDA OFF)
if(NOT HIERA_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  if(HIERA_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND TARGET CUDA::cuda_driver AND TARGET CUDA::cublas AND TARGET CUDA::cupti)
    set(HIERA_HAVE_CUDA ON)
  elseif(HIERA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HIERA_CUDA=ON but nvrtc, cuda_driver, cublas or cupti was not found")
  endif()
endif()
message(STATUS "hiera: CUDA toolkit ${HIERA_HAVE_CUDA} ${CUDAToolkit_VERSION}")

# LibTorch: Debian's libtorch-dev here; on a GPU machine the one inside the
# installed PyTorch (scripts/gpu-check passes its cmake prefix path).
set(HIERA_HAVE_TORCH OFF)
if(NOT HIERA_TORCH STREQUAL "OFF")
  if(HIERA_TORCH STREQUAL "ON")
    find_package(Torch REQUIRED)
  else()
    find_package(Torch QUIET)
  endif()
  if(Torch_FOUND)
    set(HIERA_HAVE_TORCH ON)
  endif()
endif()
message(STATUS "hiera: LibTorch ${HIERA_HAVE_TORCH}")

if(HIERA_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HIERA_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
