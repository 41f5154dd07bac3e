/* sbf--1.0--1.1.sql: what version 1.1 adds to 1.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION sbf UPDATE TO '1.1'" to load this file. \quit

