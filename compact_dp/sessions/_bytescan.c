/* The two byte scans of replay's fast reading (sessions/bytescan.py defines them, and is
   what runs where this module is not built).  Python's regular expressions look at every
   byte; here memchr, which the C library vectorises, jumps to the one byte each match must
   start with.  A history is mostly bytes no match is in, so this is ~2.3 times faster on
   the markers and ~1.8 times on the escapes (docs/scale.md). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* marked(block, start, stop): whether block[start:stop] holds "user", "assistant" or
   "system", quotes included.  Every match begins with a quote, so each quote is tried. */
static PyObject *
marked(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "marked(block: bytes, start: int, stop: int)");
        return NULL;
    }
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t stop = PyLong_AsSsize_t(args[2]);
    if (stop == -1 && PyErr_Occurred())
        return NULL;
    /* the bounds as a pattern's search takes them: clipped to the block, and an empty
       span where stop is before start (unclipped, a pointer made from a large negative
       stop wraps past the block's start and the scan reads memory it does not own) */
    if (start < 0)
        start = 0;
    else if (start > size)
        start = size;
    if (stop > size)
        stop = size;
    else if (stop < start)
        stop = start;
    const char *base = PyBytes_AS_STRING(args[0]);
    const char *p = base + start, *end = base + stop;
    while (p < end && (p = memchr(p, '"', (size_t)(end - p))) != NULL) {
        size_t left = (size_t)(end - p);
        if ((left >= 6 && memcmp(p, "\"user\"", 6) == 0) ||
            (left >= 11 && memcmp(p, "\"assistant\"", 11) == 0) ||
            (left >= 8 && memcmp(p, "\"system\"", 8) == 0))
            Py_RETURN_TRUE;
        p++;
    }
    Py_RETURN_FALSE;
}

/* escaped_control(written): whether a backslash followed by b, f or u is anywhere in it.
   Each backslash is tried, the second of an escaped one too, as the pattern does. */
static PyObject *
escaped_control(PyObject *self, PyObject *written)
{
    if (!PyBytes_Check(written)) {
        PyErr_SetString(PyExc_TypeError, "escaped_control(written: bytes)");
        return NULL;
    }
    const char *p = PyBytes_AS_STRING(written);
    const char *end = p + PyBytes_GET_SIZE(written);
    while (p < end && (p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
        if (p + 1 < end && (p[1] == 'b' || p[1] == 'f' || p[1] == 'u'))
            Py_RETURN_TRUE;
        p++;
    }
    Py_RETURN_FALSE;
}

static PyMethodDef methods[] = {
    {"marked", (PyCFunction)(void (*)(void))marked, METH_FASTCALL, NULL},
    {"escaped_control", escaped_control, METH_O, NULL},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "compact_dp.sessions._bytescan", NULL, -1, methods
};

PyMODINIT_FUNC
PyInit__bytescan(void)
{
    return PyModule_Create(&module);
}
