/* .npy reading and writing: round trips, the exact header numpy expects, files numpy wrote,
 * and every way a .npy file can be wrong. */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ref/core/io.h"
#include "ref/data/npy.h"
#include "verify/testing.h"

/* Round trip one array through a file and check shape, dtype and bytes. */
static void round_trip(npy_dtype dtype, int ndim, const int64_t *shape, const void *data, size_t bytes)
{
    char name[64];
    snprintf(name, sizeof name, "round_trip_%d_%d.npy", (int)dtype, ndim);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", temporary_directory(), name);
    tf_error err;
    ck_assert_msg(npy_write(path, dtype, ndim, shape, data, &err) == TF_OK, "%s", err.message);
    npy_array back;
    ck_assert_msg(npy_read(path, &back, &err) == TF_OK, "%s", err.message);
    ck_assert_int_eq(back.dtype, dtype);
    ck_assert_int_eq(back.ndim, ndim);
    for (int d = 0; d < ndim; d++)
        ck_assert_int_eq(back.shape[d], shape[d]);
    ck_assert(bytes == 0 || memcmp(back.data, data, bytes) == 0);
    /* numpy's rule: magic + version + length + header is a multiple of 64 bytes. */
    FILE *file = fopen(path, "rb");
    unsigned char prefix[10];
    ck_assert_uint_eq(fread(prefix, 1, 10, file), 10);
    fclose(file);
    size_t header_length = prefix[8] | (size_t)prefix[9] << 8;
    printf("round trip dtype %s ndim %d: %lld elements, header %zu bytes (data at offset %zu, a multiple of 64)\n",
           dtype == NPY_FLOAT32 ? "<f4" : "<i8", ndim, (long long)back.size, header_length, 10 + header_length);
    ck_assert_uint_eq((10 + header_length) % 64, 0);
    npy_free(&back);
}

START_TEST(round_trips)
{
    float matrix[2][3] = {{1.5f, -2.0f, 3.25f}, {0.0f, 1e-30f, -7.0f}};
    int64_t matrix_shape[2] = {2, 3};
    round_trip(NPY_FLOAT32, 2, matrix_shape, matrix, sizeof matrix);
    int64_t ids[5] = {0, -1, INT64_MAX, INT64_MIN, 42};
    int64_t ids_shape[1] = {5};
    round_trip(NPY_INT64, 1, ids_shape, ids, sizeof ids);
    float scalar = 3.5f;
    round_trip(NPY_FLOAT32, 0, NULL, &scalar, sizeof scalar);
    float cube[2][2][2] = {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}};
    int64_t cube_shape[3] = {2, 2, 2};
    round_trip(NPY_FLOAT32, 3, cube_shape, cube, sizeof cube);
    int64_t empty_shape[2] = {0, 4};
    round_trip(NPY_FLOAT32, 2, empty_shape, NULL, 0);
}
END_TEST

/* The header twofold writes is the one numpy writes, byte for byte (numpy 2.x, version 1.0). */
START_TEST(header_text_matches_numpy)
{
    float values[6] = {0};
    int64_t shape[2] = {2, 3};
    char path[256];
    snprintf(path, sizeof path, "%s/header.npy", temporary_directory());
    tf_error err;
    ck_assert(npy_write(path, NPY_FLOAT32, 2, shape, values, &err) == TF_OK);
    char header[128];
    FILE *file = fopen(path, "rb");
    ck_assert_uint_eq(fread(header, 1, 128, file), 128);
    fclose(file);
    const char *expected = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    printf("header: %.*s\n", (int)strlen(expected), header + 10);
    ck_assert(memcmp(header + 10, expected, strlen(expected)) == 0);
    ck_assert_int_eq(header[127], '\n'); /* padded with spaces to 128 bytes, newline last */
}
END_TEST

/* A file numpy itself wrote (the golden files) reads back with the right shape and values. */
START_TEST(reads_files_numpy_wrote)
{
    npy_array counts;
    tf_error err;
    ck_assert_msg(npy_read(source_path("verify/golden/loaders/twitter_tennis_edge_counts.npy"), &counts, &err) == TF_OK,
                  "%s", err.message);
    ck_assert_int_eq(counts.dtype, NPY_INT64);
    ck_assert_int_eq(counts.ndim, 1);
    ck_assert_int_eq(counts.shape[0], 120);
    int64_t smallest = INT64_MAX, largest = 0;
    for (int64_t i = 0; i < counts.size; i++) {
        int64_t c = ((int64_t *)counts.data)[i];
        smallest = c < smallest ? c : smallest;
        largest = c > largest ? c : largest;
    }
    /* datasets/README (from the upstream description): 41 to 936 edges per snapshot. */
    printf("numpy-written int64 [120]: edges per snapshot %lld..%lld\n", (long long)smallest, (long long)largest);
    ck_assert_int_eq(smallest, 41);
    ck_assert_int_eq(largest, 936);
    npy_free(&counts);

    tensor features;
    ck_assert(npy_read_tensor(source_path("verify/golden/loaders/chickenpox_features_head.npy"), &features, &err) ==
              TF_OK);
    printf("numpy-written float32 tensor: ndim %d shape [%lld][%lld][%lld]\n", features.ndim,
           (long long)features.shape[0], (long long)features.shape[1], (long long)features.shape[2]);
    ck_assert_int_eq(features.ndim, 3);
    ck_assert_int_eq(features.shape[1], 20);
    ck_assert_int_eq(features.shape[2], 4);
    tensor_free(&features);
}
END_TEST

/* A write replaces the target in one step and leaves no temporary file behind. */
START_TEST(write_is_atomic)
{
    char directory[256];
    snprintf(directory, sizeof directory, "%s/atomic", temporary_directory());
    mkdir(directory, 0700);
    char path[300];
    snprintf(path, sizeof path, "%s/parameters.npy", directory);
    float first[2] = {1, 2}, second[3] = {3, 4, 5};
    int64_t shape_first[1] = {2}, shape_second[1] = {3};
    tf_error err;
    ck_assert(npy_write(path, NPY_FLOAT32, 1, shape_first, first, &err) == TF_OK);
    ck_assert(npy_write(path, NPY_FLOAT32, 1, shape_second, second, &err) == TF_OK);
    int entries = 0;
    DIR *listing = opendir(directory);
    for (struct dirent *entry; (entry = readdir(listing));)
        entries += entry->d_name[0] != '.';
    closedir(listing);
    npy_array back;
    ck_assert(npy_read(path, &back, &err) == TF_OK);
    printf("after two writes: %d file(s) in the directory, shape [%lld]\n", entries, (long long)back.shape[0]);
    ck_assert_int_eq(entries, 1);
    ck_assert_int_eq(back.shape[0], 3);
    npy_free(&back);
    /* A directory that does not exist is an error, not a crash. */
    int status = npy_write("/nonexistent-twofold-dir/x.npy", NPY_FLOAT32, 1, shape_first, first, &err);
    ck_assert_int_ne(status, TF_OK);
    printf("  error as expected: %s\n", err.message);
    ck_assert(strstr(err.message, "/nonexistent-twofold-dir/x.npy") != NULL);
}
END_TEST

/* What is at a path and is not a regular file is never replaced, nor read: a FIFO (which would
 * block the read for ever) is refused both ways and is still a FIFO afterwards; a write into a
 * directory that does not exist names it; a discarded output leaves no file. */
START_TEST(fifo_neither_replaced_nor_read)
{
    char path[300];
    snprintf(path, sizeof path, "%s/fifo.npy", temporary_directory());
    unlink(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    float values[2] = {1, 2};
    int64_t shape[1] = {2};
    tf_error err;
    int status = npy_write(path, NPY_FLOAT32, 1, shape, values, &err);
    EXPECT_INPUT_ERROR(status, &err, "fifo.npy", "is a FIFO, which writing would replace");
    npy_array back;
    status = npy_read(path, &back, &err);
    EXPECT_INPUT_ERROR(status, &err, "fifo.npy", "is a FIFO, expected a regular file");
    struct stat info;
    ck_assert(lstat(path, &info) == 0 && S_ISFIFO(info.st_mode));
    status = npy_write("/nonexistent-twofold-dir/x.npy", NPY_FLOAT32, 1, shape, values, &err);
    EXPECT_INPUT_ERROR(status, &err, "x.npy", "the directory /nonexistent-twofold-dir does not exist");
    output_file out;
    snprintf(path, sizeof path, "%s/discarded.csv", temporary_directory());
    ck_assert_int_eq(output_open(&out, "--test", path, &err), TF_OK);
    fputs("a,b\n", out.stream);
    char temporary[sizeof out.temporary];
    memcpy(temporary, out.temporary, sizeof temporary);
    output_discard(&out);
    printf("FIFO refused both ways and still a FIFO; a discarded output leaves neither %s nor %s\n", path, temporary);
    ck_assert(lstat(path, &info) != 0 && lstat(temporary, &info) != 0);
}
END_TEST

/* A valid header for a float32 array of `count` elements followed by `data_bytes` bytes. */
static size_t make_npy(unsigned char *out, const char *dict, size_t data_bytes)
{
    size_t length = strlen(dict) + 1;
    length += (64 - (10 + length) % 64) % 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(length & 0xff);
    out[9] = (unsigned char)(length >> 8);
    memset(out + 10, ' ', length);
    memcpy(out + 10, dict, strlen(dict));
    out[10 + length - 1] = '\n';
    memset(out + 10 + length, 0, data_bytes);
    return 10 + length + data_bytes;
}

static void expect_parse_error(const unsigned char *bytes, size_t size, const char *expected)
{
    npy_array a;
    tf_error err;
    int status = npy_parse(bytes, size, "case.npy", &a, &err);
    EXPECT_INPUT_ERROR(status, &err, "case.npy", expected);
}

START_TEST(bad_files)
{
    unsigned char buffer[512] = {0};
    const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    expect_parse_error(buffer, 0, "empty");
    expect_parse_error((const unsigned char *)"PK\x03\x04 not numpy", 16, "not a .npy file");
    size_t size = make_npy(buffer, good, 24);
    expect_parse_error(buffer, size - 1, "truncated");
    memset(buffer + size, 0, 4);
    expect_parse_error(buffer, size + 4, "trailing bytes");
    expect_parse_error(buffer, 40, "truncated .npy header");
    size = make_npy(buffer, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48);
    expect_parse_error(buffer, size, "'<f8'");
    size = make_npy(buffer, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
    expect_parse_error(buffer, size, "expected '<f4'");
    size = make_npy(buffer, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }", 24);
    expect_parse_error(buffer, size, "fortran_order");
    size = make_npy(buffer, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 24);
    expect_parse_error(buffer, size, "shape");
    size = make_npy(buffer, "{'descr': '<f4', 'shape': (2, 3), }", 24);
    expect_parse_error(buffer, size, "lacks");
    size = make_npy(buffer, good, 24);
    buffer[6] = 7;
    expect_parse_error(buffer, size, "version 7");
    /* A header announcing a terabyte array is "too large for memory" before anything is read. */
    size = make_npy(buffer, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }", 0);
    expect_parse_error(buffer, size, "too large for memory");
}
END_TEST

/* @p size bytes to a file @p name in the test directory (gzip-compressed when @p gzip); its path. */
static const char *write_file(const char *name, const void *bytes, size_t size, int gzip)
{
    static char path[300];
    snprintf(path, sizeof path, "%s/%s", temporary_directory(), name);
    if (gzip) {
        gzFile file = gzopen(path, "wb");
        ck_assert(file && gzwrite(file, bytes, (unsigned)size) == (int)size && gzclose(file) == Z_OK);
    } else {
        FILE *file = fopen(path, "wb");
        ck_assert(file && fwrite(bytes, 1, size, file) == size && fclose(file) == 0);
    }
    return path;
}

/* npy_read() reads a file prefix, header, body, each checked before the next: a version-2 header
 * announcing 4 GiB is refused before it is allocated, a gzip stream cut short says so, and a
 * Fortran-order file read from disk comes back row-major. */
START_TEST(read_checks_header_before_body)
{
    npy_array a;
    tf_error err;
    const unsigned char long_header[13] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x00, 0xff, 0xff, 0xff, '{'};
    int status = npy_read(write_file("long_header.npy", long_header, sizeof long_header, 0), &a, &err);
    EXPECT_INPUT_ERROR(status, &err, "long_header.npy", "4294967040 bytes announced, expected at most 65536");
    unsigned char buffer[256] = {0};
    const float column_major[6] = {1, 4, 2, 5, 3, 6};
    size_t size = make_npy(buffer, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", sizeof column_major);
    memcpy(buffer + size - sizeof column_major, column_major, sizeof column_major);
    ck_assert_msg(npy_read(write_file("fortran.npy.gz", buffer, size, 1), &a, &err) == TF_OK, "%s", err.message);
    const float *v = a.data;
    printf("Fortran-order .npy.gz read from disk as rows: [%g %g %g] [%g %g %g]\n", v[0], v[1], v[2], v[3], v[4],
           v[5]);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(v[i], (float)(i + 1));
    npy_free(&a);
    /* The same gzip file cut by 8 bytes (its CRC and length trailer): zlib's "unexpected end of file". */
    const char *path = write_file("cut.npy.gz", buffer, size, 1);
    struct stat info;
    ck_assert(stat(path, &info) == 0 && truncate(path, info.st_size - 8) == 0);
    status = npy_read(path, &a, &err);
    EXPECT_INPUT_ERROR(status, &err, "cut.npy.gz", "gzip data truncated or corrupt");
}
END_TEST

/* A Fortran-order file (numpy's np.save(x.T)) reads back in row-major order. */
START_TEST(fortran_order_is_reordered)
{
    unsigned char buffer[256] = {0};
    /* Column-major storage of the 2 x 3 matrix [[1, 2, 3], [4, 5, 6]]: 1 4 2 5 3 6. */
    float column_major[6] = {1, 4, 2, 5, 3, 6};
    size_t size = make_npy(buffer, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", sizeof column_major);
    memcpy(buffer + size - sizeof column_major, column_major, sizeof column_major);
    npy_array a;
    tf_error err;
    ck_assert_msg(npy_parse(buffer, size, "fortran.npy", &a, &err) == TF_OK, "%s", err.message);
    const float *v = a.data;
    printf("Fortran-order 2 x 3 read as rows: [%g %g %g] [%g %g %g]\n", v[0], v[1], v[2], v[3], v[4], v[5]);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(v[i], (float)(i + 1));
    npy_free(&a);
}
END_TEST

START_TEST(missing_and_non_finite)
{
    npy_array a;
    tf_error err;
    int status = npy_read(source_path("verify/no-such-file.npy"), &a, &err);
    EXPECT_INPUT_ERROR(status, &err, "no-such-file.npy", "No such file");
    float values[3] = {1.0f, NAN, 2.0f};
    int64_t shape[1] = {3};
    char path[256];
    snprintf(path, sizeof path, "%s/nan.npy", temporary_directory());
    ck_assert(npy_write(path, NPY_FLOAT32, 1, shape, values, &err) == TF_OK);
    tensor t;
    status = npy_read_tensor(path, &t, &err);
    EXPECT_INPUT_ERROR(status, &err, "nan.npy", "element 1", "NaN");
    int64_t ids[2] = {1, 2};
    int64_t id_shape[1] = {2};
    snprintf(path, sizeof path, "%s/ids.npy", temporary_directory());
    ck_assert(npy_write(path, NPY_INT64, 1, id_shape, ids, &err) == TF_OK);
    status = npy_read_tensor(path, &t, &err);
    EXPECT_INPUT_ERROR(status, &err, "ids.npy", "expected float32");
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("npy");
    TCase *cases = tcase_create("npy");
    tcase_add_test(cases, round_trips);
    tcase_add_test(cases, header_text_matches_numpy);
    tcase_add_test(cases, reads_files_numpy_wrote);
    tcase_add_test(cases, write_is_atomic);
    tcase_add_test(cases, fifo_neither_replaced_nor_read);
    tcase_add_test(cases, read_checks_header_before_body);
    tcase_add_test(cases, bad_files);
    tcase_add_test(cases, fortran_order_is_reordered);
    tcase_add_test(cases, missing_and_non_finite);
    suite_add_tcase(suite, cases);
    return run_suite(suite);
}
